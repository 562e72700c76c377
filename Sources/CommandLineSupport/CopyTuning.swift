#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// How the relay's C library copies large blocks (`relay --copies`): ``Mode/vector`` by default,
/// ``Mode/libc`` to leave glibc's choice alone.
///
/// On x86-64, glibc copies blocks from `glibc.cpu.x86_rep_movsb_threshold` bytes up (2,112 on the
/// project's AMD EPYC machine, with glibc 2.36) with the `rep movsb` instruction, and smaller
/// ones with its vector loop. Inflating a compressed message copies large blocks all the time:
/// ISA-L saves the last 32 KiB of output after every call (one call per 16 KiB frame), and
/// assembled messages grow by whole frames. On that machine `rep movsb` was several times slower
/// than the vector loop for those blocks: `memmove` took 39 % of the relay's CPU on `bench relay
/// --goblip` C, and relay CPU per round trip fell by 30 % with the vector loop (47 → 33 CPU-s
/// per 10,000 round trips); small messages are unaffected.
///
/// glibc reads its tunables only when a program starts, so ``Mode/vector`` re-executes the relay
/// once, at start, with the tunable added to `GLIBC_TUNABLES` (the process keeps its id, its
/// arguments and its open descriptors). An operator's own setting of that tunable wins. Other
/// C libraries and processors: nothing is changed.
public enum CopyTuning {
    public enum Mode: String, CaseIterable, Sendable {
        /// Large blocks copied with glibc's vector loop, never `rep movsb`.
        case vector
        /// glibc's own choice.
        case libc
    }

    public static let tunable = "glibc.cpu.x86_rep_movsb_threshold"
    /// The threshold ``Mode/vector`` sets: 2 GiB, far above any block the relay copies (glibc
    /// switches to non-temporal stores for blocks over its own, larger threshold anyway).
    public static let vectorThreshold = "0x7fffffff"

    /// Whether glibc on this processor has the tunable (x86-64 only).
    public static var applies: Bool {
        #if canImport(Glibc) && arch(x86_64)
        return true
        #else
        return false
        #endif
    }

    /// The `GLIBC_TUNABLES` entry ``Mode/vector`` adds.
    public static let vectorEntry = "\(tunable)=\(vectorThreshold)"

    /// The `NAME=value` entries of a `GLIBC_TUNABLES` value, and the one that sets ``tunable``.
    private static func entries(of tunables: String?) -> (all: [Substring], threshold: Substring?) {
        let all = (tunables ?? "").split(separator: ":", omittingEmptySubsequences: true)
        return (all, all.first { $0.split(separator: "=", maxSplits: 1).first == Substring(tunable) })
    }

    /// The `GLIBC_TUNABLES` value to run with for `mode`, given the current one; nil when
    /// nothing changes (``Mode/libc``, another platform, or the tunable is already set).
    public static func tunables(for mode: Mode, current: String?) -> String? {
        guard mode == .vector, applies else { return nil }
        let (all, threshold) = entries(of: current)
        guard threshold == nil else { return nil }
        return (all.map(String.init) + [vectorEntry]).joined(separator: ":")
    }

    /// For ``Mode/vector``: re-executes this program (the same arguments) with the tunable set,
    /// unless it already is; returns only when nothing was to be done or `execv` failed.
    ///
    /// Not under Valgrind (its preload library in `LD_PRELOAD`): it cannot follow the program
    /// into a new image it was not told to trace, and it ends the process when `execv` fails.
    public static func reexecuteIfNeeded(_ mode: Mode) {
        #if canImport(Glibc)
        guard !underValgrind else { return }
        let previous = getenv("GLIBC_TUNABLES").map { String(cString: $0) }
        guard let value = tunables(for: mode, current: previous),
              let executable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") else { return }
        setenv("GLIBC_TUNABLES", value, 1)
        let arguments = CommandLine.arguments.map { strdup($0) } + [nil]
        execv(executable, arguments)
        // Still here: the exec failed. Run on with glibc's choice and the environment as it was.
        for argument in arguments { free(argument) }
        if let previous { setenv("GLIBC_TUNABLES", previous, 1) } else { unsetenv("GLIBC_TUNABLES") }
        #endif
    }

    /// Whether this process runs under Valgrind, whose core preloads itself.
    public static var underValgrind: Bool {
        (ProcessInfo.processInfo.environment["LD_PRELOAD"] ?? "").contains("vgpreload")
    }

    /// One line for the relay's start: how large blocks are copied, and by whose setting.
    public static func summary(_ mode: Mode, environment current: String?) -> String {
        guard applies else { return "copies: the C library's own (--copies has no effect here)" }
        let (all, setting) = entries(of: current)
        switch (mode, setting) {
        case (.libc, nil):
            return "copies: glibc's own choice of rep movsb or vector loop (--copies libc)"
        case (.vector, let setting?) where setting == Substring(vectorEntry):
            // The operator's own tunables, when there are some, are named with the relay's.
            return "copies: large blocks with glibc's vector loop, not rep movsb (--copies vector"
                + (all.count > 1 ? "; GLIBC_TUNABLES=\(current ?? ""))" : ")")
        case (_, let setting?):
            return "copies: GLIBC_TUNABLES sets \(setting)"
        case (.vector, nil):
            return underValgrind ? "copies: glibc's own choice (not re-executed under Valgrind: set GLIBC_TUNABLES=\(vectorEntry))"
                : "copies: glibc's own choice (re-executing with GLIBC_TUNABLES failed)"
        }
    }
}
