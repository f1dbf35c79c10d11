"""The exceptions shardcheck raises (besides TypeError/ValueError for bad arguments)."""


class ShardingError(ValueError):
    """Raised by Report.raise_for_errors() when the module has error diagnostics. The message is the
    text report; `.report` is the Report."""

    def __init__(self, report):
        super().__init__(str(report))
        self.report = report


class LibraryNotFoundError(ImportError):
    """libshardcheck.so was not found (or does not load) and an in-process check was asked for."""


class CheckError(RuntimeError):
    """An in-process check could not complete (e.g. it hit the analysis memory limit)."""


class RemoteError(Exception):
    """A call to shardcheckd failed. `.code` is the grpc.StatusCode, `.details` the daemon's (or the
    transport's) message, `.server` the HOST:PORT that was called."""

    def __init__(self, code, details, server):
        name = getattr(code, "name", str(code))
        super().__init__(f"{server}: {name}: {details}")
        self.code = code
        self.details = details
        self.server = server
