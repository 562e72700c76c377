import ArgumentParser

struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Show BlipScope at work on the bundled sample capture."
    )

    @Option(help: "The capture to inspect.")
    var capture: String = "samples/goblip-session.pcap"

    func run() async throws {
        print("BlipScope demo: decoding every BLIP message of \(capture)\n")
        var inspect = InspectCommand()
        inspect.file = capture
        try inspect.run()
    }
}
