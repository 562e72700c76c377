import BLIPTestSupport
import Foundation
import Testing

/// `blipscope relay --policy` as an operator runs it: the built executable.
@Suite("blipscope relay --policy, end to end")
struct RelayPolicyCommandTests {
    @Test("a broken policy file: exit non-zero, the rule and field in the message, nothing listens")
    func brokenPolicy() async throws {
        let path = NSTemporaryDirectory() + "broken-policy-\(UUID().uuidString).yaml"
        try "rules:\n  - name: slow-revs\n    action: { rateLimit: { perSecond: 0 } }\n".write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let result = try await BlipscopeExecutable.run(["relay", "--listen", "127.0.0.1:0", "--policy", path])
        #expect(result.status != 0)
        #expect(result.errors.contains("error: policy \(path): rule \"slow-revs\": action.rateLimit.perSecond: must be a positive number"))
        #expect(!result.errors.contains("listening"))
    }

    @Test("--policy-dry-run without --policy is a usage error")
    func dryRunAlone() async throws {
        let result = try await BlipscopeExecutable.run(["relay", "--listen", "127.0.0.1:0", "--policy-dry-run"])
        #expect(result.status != 0)
        #expect(result.errors.contains("--policy-dry-run goes with --policy"))
    }

    @Test("a running relay rejects a broken edit, keeps its policy, and reloads a fixed one on SIGHUP")
    func reloadWhileRunning() async throws {
        let path = NSTemporaryDirectory() + "live-policy-\(UUID().uuidString).yaml"
        try "connections: { rules: [{ name: tls, requireTLS: true }] }\n".write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let relay = try BlipscopeExecutable.start(["relay", "--listen", "127.0.0.1:0", "--policy", path])
        defer { relay.kill() }
        try await relay.waitForError(containing: "listening")
        try "rules: [{ name: typo, action: { deny: {} }, mtach: {} }]\n".write(toFile: path, atomically: true, encoding: .utf8)
        // The 1 s poll sees the edit.
        try await relay.waitForOutput { $0.contains("policy rejected: rule \"typo\": mtach: unknown key") }
        try await relay.waitForOutput { $0.contains("keeping the previous policy") }
        try "rules: []\n".write(toFile: path, atomically: true, encoding: .utf8)
        try await relay.waitForOutput { $0.contains("policy reloaded (0 rules)") }
        relay.signal(SIGHUP)
        // SIGHUP reloads even an unchanged file.
        try await relay.waitForOutput { $0.components(separatedBy: "policy reloaded (0 rules)").count - 1 >= 2 }
        #expect(relay.isRunning, "SIGHUP reloads, it does not end the relay")
        #expect(try await relay.stop() == 0, "Ctrl-C ends the relay cleanly")
    }

    static let fleetPolicy = """
        rules:
          - name: per-user
            action: { rateLimit: { perSecond: 30, key: user, onExceed: deny, scope: fleet } }
        """

    @Test("scope: fleet without --redis: exit non-zero naming the rule, the field and --redis, nothing listens")
    func fleetScopeNeedsRedis() async throws {
        let path = NSTemporaryDirectory() + "fleet-policy-\(UUID().uuidString).yaml"
        try Self.fleetPolicy.write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let result = try await BlipscopeExecutable.run(["relay", "--listen", "127.0.0.1:0", "--policy", path])
        #expect(result.status != 0)
        #expect(result.errors.contains("error: policy \(path): rule \"per-user\": action.rateLimit.scope: fleet limits are shared through Redis: start the relay with --redis URL"),
                "\(result.errors)")
        #expect(!result.errors.contains("listening"))
    }

    @Test("scope: fleet with --redis to a real redis-server: the relay starts")
    func fleetScopeWithRedisStarts() async throws {
        let path = NSTemporaryDirectory() + "fleet-policy-\(UUID().uuidString).yaml"
        try Self.fleetPolicy.write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        try await RedisServerProcess.with { redis in
            let relay = try BlipscopeExecutable.start(["relay", "--listen", "127.0.0.1:0", "--policy", path, "--redis", redis.url])
            defer { relay.kill() }
            try await relay.waitForError(containing: "listening")
            #expect(try await relay.stop() == 0)
        }
    }
}
