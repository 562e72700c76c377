import ArgumentParser

@main
struct BlipScope: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "blipscope",
        abstract: "Replication proxy and traffic inspector for Couchbase Lite ⇄ Sync Gateway (BLIP 3 over WebSocket).",
        subcommands: [RelayCommand.self, InspectCommand.self, WebCommand.self, ExportCommand.self, SniffCommand.self, DemoCommand.self, GatewayCommand.self, ReplicateCommand.self, ReplayCommand.self]
    )
}
