"""``python -m lipnorm_exp``: the ``lipnorm-exp`` command (`lipnorm_exp.cli.console.lipnorm_exp`).

The command's Hydra application is `lipnorm_exp.cli.app`; going through the console entry
point means that without the ``app`` extra this ends in one line naming the install, as the
console command does, instead of a traceback.
"""

from lipnorm_exp.cli.console import lipnorm_exp

if __name__ == "__main__":
    lipnorm_exp()
