// swift-tools-version: 6.1
// Fuzz targets for BlipScope's parsers of untrusted bytes: libFuzzer executables, one per parser,
// built with `-sanitize=fuzzer,address` (see `make fuzz` and docs/fuzzing.md). A package of its
// own, so the main package's `swift build` and `swift test` never see the sanitizer flags.
import PackageDescription

/// Each fuzz target and the products of the main package it reads through.
let fuzzTargets: [(name: String, products: [String])] = [
    ("fuzz-blip-frames", ["BLIPCore"]),
    ("fuzz-blip-assembly", ["BLIPCore"]),
    ("fuzz-properties", ["BLIPCore"]),
    ("fuzz-websocket-scanner", ["WebSocketWire"]),
    ("fuzz-websocket-messages", ["Capture"]),
    ("fuzz-http-upgrade", ["Capture"]),
    ("fuzz-relay-handshake", ["Relay"]),
    ("fuzz-relay-session", ["BLIPCore", "Capture", "Policy", "Relay", "WebSocketWire"]),
    ("fuzz-pcap-file", ["Capture"]),
    ("fuzz-capture-packets", ["Capture"]),
    ("fuzz-tcp-reassembly", ["Capture"]),
    ("fuzz-sniff", ["Capture"]),
    ("fuzz-blipcap", ["BLIPCore", "Capture"]),
    ("fuzz-replication", ["BLIPCore", "Replication", "Mediation"]),
    ("fuzz-json", ["Replication", "Mediation"]),
    ("fuzz-policy", ["BLIPCore", "Policy"]),
    ("fuzz-capture-redactor", ["BLIPCore", "Capture"]),
    ("fuzz-sg-log", ["SyncGatewayLog"]),
    ("fuzz-resp", ["RedisClient"]),
    ("fuzz-proxy-header", ["ProxyProtocol"]),
]

let package = Package(
    name: "BlipScopeFuzz",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(name: "BlipScope", path: ".."),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
    ],
    targets: [
        .target(
            name: "FuzzSupport",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "BLIPCore", package: "BlipScope"),
                .product(name: "Capture", package: "BlipScope"),
            ]
        ),
    ] + fuzzTargets.map { target in
        .executableTarget(
            name: target.name,
            dependencies: [
                "FuzzSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ] + target.products.map { .product(name: $0, package: "BlipScope") },
            // libFuzzer's runtime brings main(); the file only defines LLVMFuzzerTestOneInput.
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]
        )
    }
)
