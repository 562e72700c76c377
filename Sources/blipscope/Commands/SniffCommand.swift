import ArgumentParser
import BLIPCore
import Capture
import CommandLineSupport
import Foundation

struct SniffCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sniff",
        abstract: "Decode live, unencrypted WebSocket BLIP traffic passively through libpcap (no relay in the path)."
    )

    @Option(help: "The interface to capture on.")
    var interface = "lo"

    @Option(help: "The server's TCP port (also tells client from server when the handshake was not seen).")
    var port: UInt16 = 4984

    @Option(help: "A BPF filter instead of `tcp port PORT`.")
    var bpf: String?

    @OptionGroup var output: RecordOutputOptions
    var json: Bool { output.json }
    var acks: Bool { output.acks }
    var preview: Int { output.preview }

    @Option(help: "A directory to write one capture file per connection into (sniff-<time>-<n>-1.blipcap).")
    var capture: String?

    @Flag(help: "With --capture: keep secret BLIP property values (Authorization, Cookie, token, password …) in the capture files as seen. By default they are masked inside the frames (frames of a connection joined mid-session cannot be checked and are left out).")
    var captureSecrets = false

    @Option(help: "Stop after this many seconds (default: until SIGINT/SIGTERM).")
    var duration: Double?

    func run() throws {
        let filter = bpf ?? "tcp port \(port)"
        let source = try LivePcapSource(interface: interface, filter: filter)
        // From here on the kernel keeps every matching packet for us: a script (or a test) can
        // start the traffic once it has read this line.
        FileHandleOutput.standardError("blipscope sniff capturing on \(interface) (\(filter)); Ctrl-C to stop")
        var configuration = Sniffer.Configuration(serverPort: port)
        configuration.includeAcks = acks
        configuration.includeFrames = output.frames
        configuration.redactsSecrets = !captureSecrets
        if captureSecrets, capture != nil {
            FileHandleOutput.standardError("warning: --capture-secrets: capture files hold secret BLIP property values as seen")
        }
        let sniffer = Sniffer(configuration: configuration)
        let stop = StopFlag()
        let signals = [SIGINT, SIGTERM].map { number -> DispatchSourceSignal in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { stop.set() }
            source.resume()
            return source
        }
        defer { signals.forEach { $0.cancel() } }
        var writers: [Int: CaptureWriter] = [:]
        let stamp = Int(Date().timeIntervalSince1970)
        let deadline = duration.map { Date().addingTimeInterval($0) }
        func handle(_ output: Sniffer.Output) {
            switch output {
            case let .connectionOpened(index, client, server, request, response, midSession):
                guard !json else { return }
                let protocolName = response?.headers.values(for: "Sec-WebSocket-Protocol").first ?? "-"
                FileHandleOutput.standardOutput("# connection \(index): \(client) → \(server) \(request?.target ?? "?") \(protocolName)"
                      + (midSession ? " (capture started mid-session)" : ""))
            case .record(let record):
                FileHandleOutput.standardOutput(json ? record.jsonLine() : record.textLine(previewLength: preview))
            case let .captureRecord(index, record):
                guard let capture else { return }
                do {
                    if writers[index] == nil {
                        let rotation = CaptureRotation(directory: capture, session: "sniff-\(stamp)-\(index)")
                        writers[index] = try CaptureWriter(rotation: rotation, sessionID: UInt64(index))
                    }
                    try writers[index]?.write(record)
                } catch {
                    FileHandle.standardError.write(Data("blipscope sniff: capture of connection \(index): \(error)\n".utf8))
                }
            case .connectionClosed(let index):
                try? writers.removeValue(forKey: index)?.close()
            }
        }
        while !stop.isSet, deadline.map({ Date() < $0 }) ?? true {
            guard let packet = try source.next() else { continue }
            sniffer.receive(packet, emit: handle)
        }
        sniffer.finish(emit: handle)
        for writer in writers.values { try? writer.close() }
        if let dropped = source.droppedPackets, dropped > 0 {
            FileHandle.standardError.write(Data("blipscope sniff: the kernel dropped \(dropped) packets; affected connections could not be decoded past the loss\n".utf8))
        }
    }
}

/// Set from a signal handler's queue, read by the capture loop.
private final class StopFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    var isSet: Bool { lock.withLock { value } }
    func set() { lock.withLock { value = true } }
}
