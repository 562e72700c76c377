import BLIPTestSupport

/// `blipscope relay` as a child process, listening on an ephemeral port in front of an upstream
/// nobody answers on (for what the relay says and sets at start), with `extra` arguments;
/// `environment` goes to `/usr/bin/env` first (`NAME=value`, or `-u NAME` to unset one).
enum RelayChild {
    static func start(_ extra: [String], environment: [String] = []) throws -> RunningCommand {
        let arguments = ["relay", "--listen", "127.0.0.1:0", "--upstream", "ws://127.0.0.1:9"] + extra
        if environment.isEmpty { return try BlipscopeExecutable.start(arguments) }
        return try RunningCommand(executable: "/usr/bin/env",
                                  arguments: environment + [try BlipscopeExecutable.url().path] + arguments)
    }
}
