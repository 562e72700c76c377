import Foundation

/// The `blipscope` executable of the build under test, for tests that run its commands as a
/// user does.
///
/// SwiftPM writes every product of one build into one directory, so the executable that
/// `swift build --build-tests` made sits next to the test bundle that is running
/// (`BlipScopePackageTests.xctest`). Only that directory is looked in: a `.build/release` left by
/// another build would test other code. A missing executable is an error that fails the test,
/// never a reason to skip it.
public enum BlipscopeExecutable {
    /// The package's root directory (for `samples/`, `dashboards/`).
    public static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The build products directory of the running test bundle.
    public static var productsDirectory: URL? {
        guard let bundle = Bundle.main.executableURL?.resolvingSymlinksInPath() else { return nil }
        // Linux: …/debug/BlipScopePackageTests.xctest is the test executable itself.
        // macOS: …/debug/BlipScopePackageTests.xctest/Contents/MacOS/BlipScopePackageTests.
        var directory = bundle.deletingLastPathComponent()
        if directory.path.hasSuffix(".xctest/Contents/MacOS") {
            directory = directory.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        }
        return directory
    }

    /// The executable (`blipscope`, or `blipscope-bench`), or an error that says where it was
    /// looked for.
    public static func url(_ name: String = "blipscope") throws -> URL {
        guard let directory = productsDirectory else {
            throw CommandFailure("cannot tell the test bundle's build directory (Bundle.main has no executable URL)")
        }
        let candidate = directory.appendingPathComponent(name)
        guard FileManager.default.isExecutableFile(atPath: candidate.path) else {
            throw CommandFailure("no \(name) executable in \(directory.path): build with `swift build --build-tests` "
                                 + "(as `make test` does) before `swift test --skip-build`")
        }
        return candidate
    }

    /// Runs `blipscope arguments` to its end and returns its status and both outputs. Fails
    /// (killing it) when it has not ended within `seconds`.
    public static func run(_ arguments: [String], within seconds: Double = 60) async throws -> CommandResult {
        try await RunningCommand.run(url().path, arguments, within: seconds)
    }

    /// Starts `blipscope arguments` and returns at once; its outputs are gathered as they come.
    public static func start(_ arguments: [String]) throws -> RunningCommand {
        try RunningCommand(executable: url().path, arguments: arguments)
    }

    /// Runs `blipscope-bench arguments` (the benchmarks' own executable) as ``run(_:within:)``.
    public static func runBench(_ arguments: [String], within seconds: Double = 60) async throws -> CommandResult {
        try await RunningCommand.run(url("blipscope-bench").path, arguments, within: seconds)
    }

    /// Starts `blipscope-bench arguments` as ``start(_:)``.
    public static func startBench(_ arguments: [String]) throws -> RunningCommand {
        try RunningCommand(executable: url("blipscope-bench").path, arguments: arguments)
    }

    /// `samples/demo-docs.json`, the documents `make demo` seeds the gateway with.
    public static var sampleDocumentsPath: String { packageRoot.appendingPathComponent("samples/demo-docs.json").path }

    /// `blipscope gateway` on a free loopback port with `arguments` added; returns it running,
    /// with the port it announced.
    public static func startGateway(_ arguments: [String] = []) async throws -> (command: RunningCommand, port: Int) {
        let gateway = try start(["gateway", "--listen", "127.0.0.1:0"] + arguments)
        do {
            return (gateway, try await gateway.announcedPort())
        } catch {
            gateway.kill()
            throw error
        }
    }

    /// `blipscope relay` on a free loopback port with `arguments` added; returns it running,
    /// with the port it announced.
    public static func startRelay(_ arguments: [String]) async throws -> (command: RunningCommand, port: Int) {
        let relay = try start(["relay", "--listen", "127.0.0.1:0"] + arguments)
        do {
            return (relay, try await relay.announcedPort())
        } catch {
            relay.kill()
            throw error
        }
    }

    /// `blipscope replicate URL arguments --json`: its exit status and, when it printed one, its
    /// result object (`pulledRevisions`, `localDocuments`, `conflicts`, …).
    public static func replicate(_ url: String, _ arguments: [String] = ["--pull"],
                                 within seconds: Double = 60) async throws -> (status: Int32, result: [String: Any]?, errors: String) {
        let finished = try await run(["replicate", url, "--json"] + arguments, within: seconds)
        let object = try? JSONSerialization.jsonObject(with: Data(finished.output.utf8)) as? [String: Any]
        return (finished.status, object, finished.errors)
    }

    /// The port of the first `HOST:PORT` after `marker` in `text` (a listener's announcement,
    /// e.g. `listening on ws://127.0.0.1:40123, …` or `listening on [IPv4]127.0.0.1/127.0.0.1:40123`).
    public static func port(after marker: String, in text: String) -> Int? {
        guard let range = text.range(of: marker) else { return nil }
        let rest = String(text[range.upperBound...])
        // The first colon followed by digits: a scheme's "ws:" is followed by "//".
        guard let match = rest.range(of: #":[0-9]+"#, options: .regularExpression) else { return nil }
        return Int(rest[match].dropFirst())
    }
}

/// A finished command: exit status and everything it wrote.
public struct CommandResult: Sendable {
    public let status: Int32
    public let output: String
    public let errors: String
}

/// Why a command test could not go on: the sentence says what was expected and what was seen.
public struct CommandFailure: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
