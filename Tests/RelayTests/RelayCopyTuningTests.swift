import BLIPTestSupport
import Foundation
import Testing

/// `relay --copies`: on x86-64 glibc the relay starts itself over once, at start, with
/// `glibc.cpu.x86_rep_movsb_threshold` in `GLIBC_TUNABLES`, so large blocks (inflated history,
/// assembled messages) are copied with glibc's vector loop; `--copies libc` leaves glibc's choice,
/// and an operator's own setting of the threshold wins. The process keeps its id across the
/// re-execution, so what a supervisor started is what runs.
@Suite("blipscope relay: how large blocks are copied")
struct RelayCopyTuningTests {
    /// The relay with `GLIBC_TUNABLES` as `environment` sets it (unset otherwise).
    private func start(_ extra: [String], environment: [String] = []) throws -> RunningCommand {
        try RelayChild.start(extra, environment: ["-u", "GLIBC_TUNABLES"] + environment)
    }

    /// `GLIBC_TUNABLES` as the running relay (the process that was spawned) has it.
    private func tunables(of relay: RunningCommand) throws -> String? {
        let environ = try Data(contentsOf: URL(fileURLWithPath: "/proc/\(relay.processIdentifier)/environ"))
        return environ.split(separator: 0).lazy.map { String(decoding: $0, as: UTF8.self) }
            .first { $0.hasPrefix("GLIBC_TUNABLES=") }.map { String($0.dropFirst("GLIBC_TUNABLES=".count)) }
    }

    #if arch(x86_64)
    @Test("by default the relay runs with glibc's vector loop for large copies, and says so")
    func vectorByDefault() async throws {
        let relay = try start([])
        defer { relay.kill() }
        let text = try await relay.waitForError(containing: "copies: large blocks with glibc's vector loop, not rep movsb (--copies vector)\n")
        #expect(text.contains("blipscope relay listening on "))
        #expect(try tunables(of: relay) == "glibc.cpu.x86_rep_movsb_threshold=0x7fffffff")
    }

    /// (glibc rewrites the variable's original bytes as it parses several tunables, so only the
    /// relay's own reading of its environment, in its start line, tells what it started with.)
    @Test("the operator's other tunables are kept, the threshold added after them")
    func otherTunablesKept() async throws {
        let relay = try start([], environment: ["GLIBC_TUNABLES=glibc.malloc.check=0"])
        defer { relay.kill() }
        try await relay.waitForError(containing: "copies: large blocks with glibc's vector loop, not rep movsb (--copies vector; GLIBC_TUNABLES=glibc.malloc.check=0:glibc.cpu.x86_rep_movsb_threshold=0x7fffffff)\n")
    }

    @Test("an operator's own threshold wins and is named")
    func operatorWins() async throws {
        let relay = try start([], environment: ["GLIBC_TUNABLES=glibc.cpu.x86_rep_movsb_threshold=4096"])
        defer { relay.kill() }
        try await relay.waitForError(containing: "copies: GLIBC_TUNABLES sets glibc.cpu.x86_rep_movsb_threshold=4096\n")
        #expect(try tunables(of: relay) == "glibc.cpu.x86_rep_movsb_threshold=4096")
    }

    /// Valgrind cannot follow a program into a new image it was not told to trace (and ends the
    /// process when `execv` fails), so under it the relay runs on as it started and says how to
    /// set the tunable instead. Valgrind is recognised by its preload library, which a stand-in
    /// path plays here (the loader reports it missing and goes on).
    @Test("under Valgrind the relay does not re-execute itself and says how to set the tunable")
    func notUnderValgrind() async throws {
        let relay = try start([], environment: ["LD_PRELOAD=/nonexistent/vgpreload_core-amd64-linux.so"])
        defer { relay.kill() }
        try await relay.waitForError(containing: "copies: glibc's own choice (not re-executed under Valgrind: set GLIBC_TUNABLES=glibc.cpu.x86_rep_movsb_threshold=0x7fffffff)\n")
        #expect(try tunables(of: relay) == nil)
    }

    @Test("--copies libc leaves glibc's choice and the environment alone")
    func libc() async throws {
        let relay = try start(["--copies", "libc"])
        defer { relay.kill() }
        try await relay.waitForError(containing: "copies: glibc's own choice of rep movsb or vector loop (--copies libc)\n")
        #expect(try tunables(of: relay) == nil)
    }
    #endif

    @Test("an unknown mode is refused before anything starts")
    func unknownMode() async throws {
        let finished = try await BlipscopeExecutable.run(["relay", "--listen", "127.0.0.1:0", "--upstream", "ws://127.0.0.1:9",
                                                          "--copies", "fast"], within: 30)
        #expect(finished.status != 0)
        #expect(finished.errors.contains("fast"))
    }
}
