import BLIPTestSupport
import Foundation
import Testing
@testable import blipscope_bench

/// The `machine:` line each benchmark report starts with: ratios move with the processor, so a
/// report says which one it ran on.
@Suite struct BenchMachineTests {
    /// Two processors of an x86 virtual machine, as Linux lists them (fields cut to those read).
    static let xeonGuest = (0..<2).map { processor in
        """
        processor\t: \(processor)
        vendor_id\t: GenuineIntel
        cpu family\t: 6
        model\t\t: 207
        model name\t: Intel(R) Xeon(R) Processor
        flags\t\t: fpu vme sse2 avx2 erms fsrm hypervisor lahf_lm

        """
    }.joined(separator: "\n")

    @Test func anIntelGuestIsNamedWithItsGenerationAndAsAVirtualMachine() {
        let machine = BenchMachine(cpuinfo: Self.xeonGuest, kernel: "6.1.0-37-amd64")
        #expect(machine.processors == 2)
        #expect(machine.virtual)
        #expect(machine.line == "machine: Intel(R) Xeon(R) Processor (GenuineIntel, family 6, model 207), 2 CPUs, a virtual machine, Linux 6.1.0-37-amd64")
    }

    @Test func aBareAMDHostIsNotCalledVirtual() {
        let text = Self.xeonGuest
            .replacingOccurrences(of: "GenuineIntel", with: "AuthenticAMD")
            .replacingOccurrences(of: "cpu family\t: 6", with: "cpu family\t: 25")
            .replacingOccurrences(of: "model\t\t: 207", with: "model\t\t: 1")
            .replacingOccurrences(of: "Intel(R) Xeon(R) Processor", with: "AMD EPYC 7B13")
            .replacingOccurrences(of: " hypervisor", with: "")
        let machine = BenchMachine(cpuinfo: text)
        #expect(!machine.virtual)
        #expect(machine.line == "machine: AMD EPYC 7B13 (AuthenticAMD, family 25, model 1), 2 CPUs")
    }

    /// arm64 kernels name no model; the implementer and part tell the core apart.
    @Test func anArmMachineIsNamedByImplementerAndPart() {
        let text = """
            processor\t: 0
            BogoMIPS\t: 243.75
            Features\t: fp asimd evtstrm aes pmull sha1 sha2 crc32
            CPU implementer\t: 0x41
            CPU architecture: 8
            CPU part\t: 0xd0c

            """
        let machine = BenchMachine(cpuinfo: text)
        #expect(machine.line == "machine: an unnamed processor (implementer 0x41, family 8, model 0xd0c), 1 CPU")
    }

    /// Through the built binary: the report's first line names the machine it ran on, as this
    /// process reads it from the kernel.
    @Test func theAnalyzerBenchReportStartsWithTheMachine() async throws {
        let finished = try await BlipscopeExecutable.runBench(["analyzer", "--messages", "2000", "--rounds", "1"], within: 600)
        #expect(finished.status == 0, "\(finished.errors)")
        let first = finished.output.split(separator: "\n").first.map(String.init)
        #expect(first == BenchMachine.current().line)
        #expect(first?.hasPrefix("machine: ") == true)
    }
}
