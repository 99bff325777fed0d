"""An argument parser whose refusals are one line: the commands that read records share it."""

import argparse

__all__ = ["EXIT_REFUSED", "OneLineParser"]

#: exit status of a refused argument (argparse's own)
EXIT_REFUSED = 2


class OneLineParser(argparse.ArgumentParser):
    """An :class:`argparse.ArgumentParser` that refuses a bad argument in one line (no usage block).

    Args:
        error_prefix (str): the start of that line (``lipnorm_exp.report: error: ``).
        *args, **kwargs: :class:`argparse.ArgumentParser`'s.
    """

    def __init__(self, *args, error_prefix: str, **kwargs):
        super().__init__(*args, **kwargs)
        self.error_prefix = error_prefix

    def error(self, message: str):
        """Print ``<error_prefix><message>; see --help`` and exit with :data:`EXIT_REFUSED`."""
        self.exit(EXIT_REFUSED, f"{self.error_prefix}{message}; see --help\n")
