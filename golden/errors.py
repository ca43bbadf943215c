"""Errors that the command line turns into one line and exit status 2."""


class FatnetInputError(ValueError):
    """Bad input from a user: a parameter that cannot be built or a malformed file.

    The message is one line that names the parameter (or file) and the accepted range,
    so that the command line can print it as it is.
    """


class ParameterError(FatnetInputError):
    """A network parameter outside its accepted range."""


class MessageFileError(FatnetInputError):
    """An input file (a message file, the butterfly's fault masks) that cannot be read or
    parsed, is not a regular file, or whose entries are out of range."""
