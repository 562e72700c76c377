import BLIPTestSupport
import Foundation
import Testing

/// `relay --heap` sets glibc's mmap and trim thresholds: steady by default (large messages reuse
/// heap memory instead of faulting it in again), compact for a flat RSS (the soak depends on it),
/// or glibc's own; the operator's environment settings win over all of them.
@Suite("blipscope relay: heap settings")
struct RelayHeapTuningTests {
    private func start(_ extra: [String], environment: [String] = []) throws -> RunningCommand {
        try RelayChild.start(extra, environment: environment)
    }

    @Test("by default the relay keeps 16 MiB of free heap and maps blocks over 4 MiB on their own, and says so")
    func steadyByDefault() async throws {
        let relay = try start([])
        defer { relay.kill() }
        let text = try await relay.waitForError(containing: "heap: malloc mmap threshold 4 MiB, trim threshold 16 MiB (--heap steady)\n")
        #expect(text.contains("blipscope relay listening on "))
    }

    @Test("--heap compact (and its older spelling --compact-heap) fixes the mmap threshold at 128 KiB and the trim threshold at 1 MiB")
    func compact() async throws {
        for flags in [["--heap", "compact"], ["--compact-heap"]] {
            let relay = try start(flags)
            defer { relay.kill() }
            try await relay.waitForError(containing: "heap: malloc mmap threshold 128 KiB, trim threshold 1 MiB (--heap compact)\n")
        }
    }

    @Test("--heap libc leaves glibc's adjusting thresholds alone")
    func libc() async throws {
        let relay = try start(["--heap", "libc"])
        defer { relay.kill() }
        try await relay.waitForError(containing: "heap: the C library's defaults (--heap libc)\n")
    }

    @Test("glibc's own environment settings win over the profile and are named")
    func environmentWins() async throws {
        let relay = try start(["--compact-heap"], environment: ["MALLOC_MMAP_THRESHOLD_=65536"])
        defer { relay.kill() }
        try await relay.waitForError(containing: "heap: malloc mmap threshold MALLOC_MMAP_THRESHOLD_, trim threshold 1 MiB (--heap compact)\n")
    }

    @Test("an unknown profile is refused before anything starts")
    func unknownProfile() async throws {
        let finished = try await BlipscopeExecutable.run(["relay", "--listen", "127.0.0.1:0", "--upstream", "ws://127.0.0.1:9",
                                                          "--heap", "huge"], within: 30)
        #expect(finished.status != 0)
        #expect(finished.errors.contains("huge"))
    }
}
