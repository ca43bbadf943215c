"""Errors that the command line turns into one line and exit status 2."""


class FatnetInputError(ValueError):
    """Bad input from a user: a parameter that cannot be built or a malformed file.

    The message is one line that names the parameter (or file) and the accepted range,
    so that the command line can print it as it is.
    """


class ParameterError(FatnetInputError):
    """A network parameter outside its accepted range."""


class MessageFileError(FatnetInputError):
    """A message file that cannot be read, parsed or whose entries are out of range."""
