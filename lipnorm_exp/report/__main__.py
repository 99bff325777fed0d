"""``python -m lipnorm_exp.report``: the ``lipnorm-exp-report`` command (`command`).

It goes the way of the console command (`lipnorm_exp.util.commands.run_entry_point`): without the
``app`` extra it ends in the same one line naming the install, instead of a traceback.
"""

from lipnorm_exp.util.commands import run_entry_point

if __name__ == "__main__":
    run_entry_point("lipnorm-exp-report", "lipnorm_exp.report.command:main")
