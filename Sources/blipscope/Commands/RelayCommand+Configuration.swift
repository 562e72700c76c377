import CommandLineSupport
import Foundation
import ArgumentParser
import BLIPNIO
import Logging
import Mediation
import NIOCore
import NIOPosix
import FleetLimits
import Policy
import Relay
import WebView
import ServiceLifecycle

extension RelayCommand {
    func makeConfiguration(fleet: FleetLimiter? = nil) throws -> RelayConfiguration {
        var routes: [String: [UpstreamURL]] = [:]
        for entry in route {
            guard let equals = entry.firstIndex(of: "="), equals != entry.startIndex else {
                throw CommandFailure(cause: "--route \(entry): no database name", hint: "give DB=ws://HOST:PORT, e.g. db=ws://sg:4984")
            }
            let database = String(entry[..<equals])
            let urls = entry[entry.index(after: equals)...].split(separator: ",", omittingEmptySubsequences: false)
            routes[database] = try urls.map {
                try OptionCheck.upstreamURL(String($0).trimmingCharacters(in: .whitespaces), option: "--route", shown: "--route \(entry)",
                                            expected: "DB=ws://HOST:PORT or DB=wss://HOST:PORT, several separated by commas")
            }
        }
        var defaultNodes = try upstream.map { try OptionCheck.upstreamURL($0, option: "--upstream") }
        if defaultNodes.isEmpty && routes.isEmpty { defaultNodes = [UpstreamURL("ws://127.0.0.1:4984")!] }
        var configuration = RelayConfiguration(upstream: UpstreamRouting(defaultNodes: defaultNodes, perDatabaseNodes: routes))
        configuration.upstreamChecks = try upstreamChecks()
        let (host, port) = try OptionCheck.hostPort(listen, option: "--listen")
        configuration.listenHost = host
        configuration.listenPort = port
        configuration.serverTLS = try OptionCheck.serverTLS(certificate: tlsCert, key: tlsKey)
        configuration.upstreamTLS = try OptionCheck.clientTLS(caBundle: upstreamCA, insecure: insecure, option: "--upstream-ca")
        configuration.strict = strict
        if noDecode {
            // Each of these decides from decoded messages.
            for (given, option) in [(strict, "--strict"), (!denyProfile.isEmpty, "--deny-profile"), (policy != nil, "--policy")]
            where given {
                throw ValidationError("--no-decode does not go with \(option), which decodes messages to decide")
            }
            configuration.decodes = false
        }
        if !denyProfile.isEmpty {
            let profiles = Set(denyProfile)
            configuration.mediationPolicy = { _ in DenyProfilesPolicy(profiles: profiles) }
        }
        configuration.logFormat = logFormat
        configuration.redactBodies = redactBodies
        configuration.upstreamHandshakeTimeout = .seconds(try OptionCheck.atLeast(handshakeTimeout, 1, option: "--handshake-timeout", unit: " s"))
        configuration.clientHandshakeTimeout = .seconds(try OptionCheck.atLeast(clientHeaderTimeout, 1, option: "--client-header-timeout", unit: " s"))
        configuration.idleTimeout = try OptionCheck.atLeast(idleTimeout, 0, option: "--idle-timeout", unit: " s") > 0 ? .seconds(idleTimeout) : nil
        if proxyProtocol {
            var settings = ProxyProtocolSettings()
            settings.headerTimeout = .seconds(try OptionCheck.atLeast(proxyHeaderTimeout, 1, option: "--proxy-header-timeout", unit: " s"))
            configuration.proxyProtocol = settings
        } else if proxyHeaderTimeout != 5 {
            throw ValidationError("--proxy-header-timeout goes with --proxy-protocol")
        }
        configuration.drainTimeout = .seconds(try OptionCheck.atLeast(drainTimeout, 0, option: "--drain-timeout", unit: " s"))
        configuration.eventLoopThreads = try OptionCheck.atLeast(threads, 1, option: "--threads")
        guard inspectionDelayMs >= 0, inspectionDelayMs <= 1000 else {
            throw CommandFailure(cause: "--inspection-delay-ms \(inspectionDelayMs): out of range", hint: "give 0 to 1000 milliseconds")
        }
        configuration.limits.inspectionDelay = .nanoseconds(Int64(inspectionDelayMs * 1_000_000))
        let batch = inspectionBatch.split(separator: ",").map { Int($0.trimmingCharacters(in: .whitespaces)) }
        guard (1...2).contains(batch.count), let frames = batch[0], frames >= 1,
              let kib = batch.count == 2 ? batch[1] : 256, (1...65536).contains(kib) else {
            throw CommandFailure(cause: "--inspection-batch \(inspectionBatch): not FRAMES or FRAMES,KIB",
                                 hint: "give at least 1 frame and 1 to 65536 KiB, e.g. 64,256")
        }
        configuration.limits.inspectionBatchFrames = frames
        configuration.limits.inspectionBatchBytes = kib * 1024
        do {
            configuration.cpuAffinity = try cpus.map { try CPUAffinity(parsing: $0) }
        } catch {
            throw CommandFailure(cause: "--cpus: \(error)", hint: "give CPU numbers and ranges, e.g. 1 or 0-3,6")
        }
        try applyCaptureOptions(to: &configuration)
        try applyPolicyOptions(to: &configuration, fleet: fleet)
        return configuration
    }

    /// `--upstream-check-interval`, `--upstream-check-timeout`, `--upstream-fall`, `--upstream-rise`.
    func upstreamChecks() throws -> UpstreamHealthChecks {
        guard upstreamCheckInterval >= 0, upstreamCheckInterval <= 3600 else {
            throw CommandFailure(cause: "--upstream-check-interval \(upstreamCheckInterval): out of range", hint: "give 0 (no checks) to 3600 seconds")
        }
        guard upstreamCheckTimeout > 0, upstreamCheckTimeout <= 600 else {
            throw CommandFailure(cause: "--upstream-check-timeout \(upstreamCheckTimeout): out of range", hint: "give more than 0 and at most 600 seconds")
        }
        var checks = UpstreamHealthChecks(interval: upstreamCheckInterval > 0 ? .nanoseconds(Int64(upstreamCheckInterval * 1e9)) : nil)
        checks.timeout = .nanoseconds(Int64(upstreamCheckTimeout * 1e9))
        checks.fall = try OptionCheck.atLeast(upstreamFall, 1, option: "--upstream-fall")
        checks.rise = try OptionCheck.atLeast(upstreamRise, 1, option: "--upstream-rise")
        return checks
    }

    /// The start line's account of when forwarded frames are inspected.
    static func inspectionSummary(_ configuration: RelayConfiguration) -> String {
        guard configuration.decodes else { return "inspection: off, frames are forwarded and counted, not decoded (--no-decode)" }
        let limits = configuration.limits
        let milliseconds = Double(limits.inspectionDelay.nanoseconds) / 1e6
        guard milliseconds > 0 else { return "inspection: each read, right after it is forwarded (--inspection-delay-ms 0)" }
        let delay = milliseconds == milliseconds.rounded() ? String(Int(milliseconds)) : String(milliseconds)
        return "inspection: within \(delay) ms of a read, or at \(limits.inspectionBatchFrames) frames or "
            + "\(limits.inspectionBatchBytes / 1024) KiB waiting (--inspection-delay-ms, --inspection-batch)"
    }

    func applyCaptureOptions(to configuration: inout RelayConfiguration) throws {
        guard let overflow = RelayConfiguration.CaptureOverflowPolicy(rawValue: captureOverflow) else {
            throw CommandFailure(cause: "--capture-overflow \(captureOverflow): no such policy", hint: "give backpressure or drop")
        }
        if let megabytes = captureMaxFileMb { _ = try OptionCheck.atLeast(megabytes, 1, option: "--capture-max-file-mb", unit: " MiB") }
        if let capture { try OptionCheck.directory(capture, option: "--capture", holding: "capture files") }
        if let pcap { try OptionCheck.writableFile(pcap, option: "--pcap", holding: "pcap file") }
        configuration.captureDirectory = capture
        configuration.captureMaxFileBytes = captureMaxFileMb.map { $0 << 20 }
        configuration.captureOverflow = overflow
        configuration.pcapPath = pcap
        configuration.captureSecrets = captureSecrets
    }

    /// Loads `--policy`; a bad file ends the command before anything listens.
    func applyPolicyOptions(to configuration: inout RelayConfiguration, fleet: FleetLimiter?) throws {
        if policyDryRun, policy == nil { throw ValidationError("--policy-dry-run goes with --policy FILE") }
        guard let policy else { return }
        _ = try OptionCheck.readableFile(policy, option: "--policy", holding: "policy file (YAML)")
        do {
            configuration.policy = try PolicyStore(path: policy, dryRun: policyDryRun,
                                                   state: PolicyState(fleet: fleet, fleetSessions: fleet))
        } catch {
            FileHandleOutput.standardError("error: policy \(policy): \(error)")
            throw ExitCode.failure
        }
        configuration.policyDryRun = policyDryRun
    }

    func describe(_ routing: UpstreamRouting) -> String {
        func nodes(_ urls: [UpstreamURL]) -> String { urls.map(\.description).joined(separator: " + ") }
        var parts = routing.defaultNodes.isEmpty ? [] : [nodes(routing.defaultNodes)]
        parts += routing.perDatabaseNodes.sorted { $0.key < $1.key }.map { "\($0.key)→\(nodes($0.value))" }
        return parts.joined(separator: ", ")
    }
}
