"""The errors gpuwise raises: every one names the file, line and field at fault, as the CLI does."""


class Error(Exception):
    """Input gpuwise cannot take. ``exit_code`` is the CLI's exit status for it."""

    exit_code = 1

    def __init__(self, text, file="", line=0, field="", message=""):
        super().__init__(text)
        self.file = file        # the file at fault; "" when the input is an option or a string
        self.line = line        # 1-based; 0 when unknown
        self.field = field      # the key, column or option ("services.chat.slo", "--columns")
        self.message = message or text


class BadInputError(Error, ValueError):
    """A spec, file or option that cannot be read or is out of range (the CLI's exit status 1)."""


class InfeasibleError(Error):
    """The question has no answer within its constraints (exit status 3): nothing can run it."""

    exit_code = 3


def from_native(fields):
    """The gpuwise.Error for a _native.NativeError's (kind, file, line, field, message, text)."""
    kind, file, line, field, message, text = fields
    if kind == 130:
        return KeyboardInterrupt(text)
    cls = InfeasibleError if kind == 3 else BadInputError
    return cls(text, file=file, line=line, field=field, message=message)
