import BLIPTestSupport
import Foundation
import Testing

/// The relay fixes glibc's mmap and trim thresholds at start (the soak's flat RSS depends on it),
/// unless the operator set them in the environment.
@Suite("blipscope relay: heap settings")
struct RelayHeapTuningTests {
    @Test("by default the relay fixes the mmap threshold at 128 KiB and the trim threshold at 1 MiB")
    func defaults() async throws {
        let relay = try BlipscopeExecutable.start(["relay", "--listen", "127.0.0.1:0", "--upstream", "ws://127.0.0.1:9"])
        defer { relay.kill() }
        let text = try await relay.waitForError(containing: "heap: malloc mmap threshold 128 KiB, trim threshold 1 MiB\n")
        #expect(text.contains("blipscope relay listening on "))
    }

    @Test("glibc's own environment settings win and are named")
    func environmentWins() async throws {
        let relay = try RunningCommand(
            executable: "/usr/bin/env",
            arguments: ["MALLOC_MMAP_THRESHOLD_=65536", try BlipscopeExecutable.url().path,
                        "relay", "--listen", "127.0.0.1:0", "--upstream", "ws://127.0.0.1:9"])
        defer { relay.kill() }
        try await relay.waitForError(containing: "heap: malloc mmap threshold MALLOC_MMAP_THRESHOLD_, trim threshold 1 MiB\n")
    }
}
