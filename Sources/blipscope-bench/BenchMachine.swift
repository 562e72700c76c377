import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The machine a benchmark ran on, as the first line of its report says it (`machine: …`).
///
/// Every figure the benchmarks print is a ratio to something measured in the same run (nginx,
/// bare zlib, the bare forwarder), yet those ratios move with the processor: the relay's CPU
/// against nginx's on `bench relay --goblip` A was 1.39× on one 2-core virtual machine of the
/// project's kind (AMD EPYC) and 1.93–1.99× on another (Intel Xeon), where nginx's own CPU was a
/// quarter lower and the bare NIO forwarder 1.26–1.39× nginx's. A report that names its machine can
/// be compared with the right ones.
struct BenchMachine {
    /// `model name` of the first processor, as the kernel reports it.
    var model: String?
    /// `vendor_id`: GenuineIntel, AuthenticAMD, ….
    var vendor: String?
    /// `cpu family` and `model`, which tell processor generations apart under one model name.
    var family: String?
    var modelNumber: String?
    /// Processors the kernel lists.
    var processors: Int
    /// The processor's `hypervisor` flag: the benchmark ran in a virtual machine.
    var virtual: Bool
    /// The kernel's release (`uname -r`).
    var kernel: String?

    /// Reads `/proc/cpuinfo` and the kernel's release; what a platform lacks stays unknown.
    static func current() -> BenchMachine {
        let text = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        var machine = BenchMachine(cpuinfo: text)
        if machine.processors == 0 { machine.processors = ProcessInfo.processInfo.activeProcessorCount }
        machine.kernel = kernelRelease()
        return machine
    }

    /// The first processor's fields of a `/proc/cpuinfo` text (x86 and arm64 spellings), and how
    /// many processors it lists.
    init(cpuinfo: String, kernel: String? = nil) {
        var fields: [String: String] = [:]
        var processors = 0
        for line in cpuinfo.split(separator: "\n") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let key = line[..<colon].trimmingCharacters(in: .whitespaces)
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            if key == "processor" { processors += 1 }
            // The first processor's value; later processors repeat it.
            if fields[key] == nil { fields[key] = value }
        }
        model = fields["model name"].flatMap { $0.isEmpty ? nil : $0 }
        vendor = fields["vendor_id"] ?? fields["CPU implementer"].map { "implementer \($0)" }
        family = fields["cpu family"] ?? fields["CPU architecture"]
        modelNumber = fields["model"] ?? fields["CPU part"]
        self.processors = processors
        let flags = (fields["flags"] ?? fields["Features"] ?? "").split(separator: " ")
        virtual = flags.contains("hypervisor")
        self.kernel = kernel
    }

    /// `machine: Intel(R) Xeon(R) Processor (GenuineIntel, family 6, model 207), 2 CPUs, a virtual machine, Linux 6.1.0`
    var line: String {
        var identity: [String] = []
        if let vendor { identity.append(vendor) }
        if let family { identity.append("family \(family)") }
        if let modelNumber { identity.append("model \(modelNumber)") }
        var parts = [(model ?? "an unnamed processor") + (identity.isEmpty ? "" : " (\(identity.joined(separator: ", ")))")]
        parts.append(processors == 1 ? "1 CPU" : "\(processors) CPUs")
        if virtual { parts.append("a virtual machine") }
        if let kernel { parts.append("Linux \(kernel)") }
        return "machine: " + parts.joined(separator: ", ")
    }

    private static func kernelRelease() -> String? {
        #if canImport(Glibc)
        var names = utsname()
        guard uname(&names) == 0 else { return nil }
        return withUnsafeBytes(of: &names.release) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        #else
        return nil
        #endif
    }
}
