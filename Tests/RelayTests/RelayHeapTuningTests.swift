import BLIPTestSupport
import Foundation
import Testing

/// `relay --compact-heap` fixes glibc's mmap and trim thresholds (the soak's flat RSS depends on
/// it); without it glibc keeps its own; the operator's environment settings win over the flag.
@Suite("blipscope relay: heap settings")
struct RelayHeapTuningTests {
    @Test("by default the relay leaves glibc's heap settings alone and says so")
    func defaults() async throws {
        let relay = try BlipscopeExecutable.start(["relay", "--listen", "127.0.0.1:0", "--upstream", "ws://127.0.0.1:9"])
        defer { relay.kill() }
        let text = try await relay.waitForError(containing: "heap: the C library's defaults (--compact-heap fixes them)\n")
        #expect(text.contains("blipscope relay listening on "))
    }

    @Test("--compact-heap fixes the mmap threshold at 128 KiB and the trim threshold at 1 MiB")
    func compact() async throws {
        let relay = try BlipscopeExecutable.start(["relay", "--listen", "127.0.0.1:0", "--upstream", "ws://127.0.0.1:9",
                                                   "--compact-heap"])
        defer { relay.kill() }
        try await relay.waitForError(containing: "heap: malloc mmap threshold 128 KiB, trim threshold 1 MiB\n")
    }

    @Test("glibc's own environment settings win over --compact-heap and are named")
    func environmentWins() async throws {
        let relay = try RunningCommand(
            executable: "/usr/bin/env",
            arguments: ["MALLOC_MMAP_THRESHOLD_=65536", try BlipscopeExecutable.url().path,
                        "relay", "--listen", "127.0.0.1:0", "--upstream", "ws://127.0.0.1:9", "--compact-heap"])
        defer { relay.kill() }
        try await relay.waitForError(containing: "heap: malloc mmap threshold MALLOC_MMAP_THRESHOLD_, trim threshold 1 MiB\n")
    }
}
