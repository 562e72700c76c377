// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "BlipScope",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "blipscope", targets: ["blipscope"]),
        // The benchmarks, a tool apart from the product (`make bench`).
        .executable(name: "blipscope-bench", targets: ["blipscope-bench"]),
        .library(name: "BLIPCore", targets: ["BLIPCore"]),
        // The parsers of untrusted bytes, for the fuzz targets in Fuzz/ (a package of its own).
        .library(name: "WebSocketWire", targets: ["WebSocketWire"]),
        .library(name: "Capture", targets: ["Capture"]),
        .library(name: "Replication", targets: ["Replication"]),
        .library(name: "Mediation", targets: ["Mediation"]),
        .library(name: "Policy", targets: ["Policy"]),
        .library(name: "Relay", targets: ["Relay"]),
        .library(name: "WebView", targets: ["WebView"]),
        .library(name: "SyncGatewayLog", targets: ["SyncGatewayLog"]),
        .library(name: "RedisClient", targets: ["RedisClient"]),
        .library(name: "ProxyProtocol", targets: ["ProxyProtocol"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "3.12.3"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/jpsim/Yams.git", from: "5.0.1"),
    ],
    targets: [
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        .systemLibrary(name: "CPcap", providers: [.apt(["libpcap-dev"])]),
        // glibc's <malloc.h> (mallopt) for the executable's heap settings; libc, nothing to link.
        .systemLibrary(name: "CMalloc"),
        // Intel ISA-L: inflate and CRC-32 on the decode paths (zlib stays for deflate).
        .systemLibrary(name: "CISAL", pkgConfig: "libisal", providers: [.apt(["libisal-dev"])]),
        .target(
            name: "BLIPCore",
            dependencies: ["CZlib", "CISAL", "ReplicationNames", .product(name: "NIOCore", package: "swift-nio")],
            // Codec state is confined to one direction of one connection; dynamic exclusivity
            // checks on its class properties cost ~10% of per-frame time in release builds.
            swiftSettings: [.unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release))]
        ),
        .target(
            name: "WebSocketWire",
            dependencies: [.product(name: "NIOCore", package: "swift-nio")],
            // A scanner or masking key is confined to one direction of one connection; dynamic
            // exclusivity checks on the scanner's buffer cost ~300 instructions per relayed round
            // trip on small messages in release builds (callgrind, bench instructions A).
            swiftSettings: [.unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release))]
        ),
        .target(
            // The replication protocol's profile and property names, each spelled once, below every
            // module that uses them (BLIPCore and all above it). Depends on nothing.
            name: "ReplicationNames"
        ),
        .target(
            // A value its one writer holds for a batch of writes while readers elsewhere wait.
            name: "BatchLock"
        ),
        .target(
            // Every metric the relay exports, defined once (name, type, labels, HELP), for the
            // relay, the soak and the dashboards' test.
            name: "MetricCatalog"
        ),
        .target(
            name: "Mediation",
            dependencies: ["BLIPCore", "ReplicationNames", .product(name: "NIOCore", package: "swift-nio")]
        ),
        .target(
            name: "Replication",
            dependencies: ["BLIPCore", "ReplicationNames", "BatchLock", .product(name: "NIOCore", package: "swift-nio")],
            // SessionAnalyzer's state is behind its lock; dynamic exclusivity checks on it cost
            // 1–3 % of the analyzer's instructions per message in release builds.
            swiftSettings: [.unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release))]
        ),
        .target(
            // Sync Gateway's log lines, read and joined with the sessions they belong to.
            name: "SyncGatewayLog",
            dependencies: ["CZlib"]
        ),
        .target(
            // The PROXY protocol header (v1 and v2) a load balancer puts before a client's bytes:
            // a pure parser, below the relay. Depends on nothing.
            name: "ProxyProtocol"
        ),
        .target(
            // A small Redis client (RESP2 over TCP or TLS) for the fleet's shared counters.
            name: "RedisClient",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "Policy",
            dependencies: [
                "BLIPCore", "ReplicationNames",
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Yams", package: "Yams"),
            ]
        ),
        .target(
            // The policy's `scope: fleet` limits shared through Redis: token allowances drawn in
            // batches, session leases, the fallback to local limits while Redis is away.
            name: "FleetLimits",
            dependencies: [
                "Policy", "RedisClient",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            // One session's bridge from the policy file's message rules to the mediator: the
            // value a mediating session's SessionMediator asks, below the relay.
            name: "MediationRules",
            dependencies: ["BLIPCore", "Mediation", "Policy", "Replication", .product(name: "NIOCore", package: "swift-nio")]
        ),
        .target(
            name: "Capture",
            dependencies: [
                "BLIPCore", "CPcap", "WebSocketWire", "ReplicationNames",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        .target(
            name: "WebView",
            dependencies: [
                "BLIPCore", "BatchLock", "Replication", "Capture", "SyncGatewayLog",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            // The page, its script and style, served from the binary (Bundle.module).
            resources: [.copy("Resources/ui")]
        ),
        .target(
            name: "BLIPNIO",
            dependencies: [
                "BLIPCore",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),
        .target(
            name: "Relay",
            dependencies: [
                "BLIPCore", "BLIPNIO", "Replication", "Capture", "Mediation", "MediationRules", "Policy", "WebSocketWire", "WebView", "MetricCatalog",
                "ProxyProtocol",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOExtras", package: "swift-nio-extras"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            // A session's state is confined to its event loop; dynamic exclusivity checks on
            // its class properties cost ~3 % of relay CPU on small messages in release builds.
            swiftSettings: [.unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release))]
        ),
        .target(
            name: "Gateway",
            dependencies: [
                "BLIPCore", "BLIPNIO", "Replication", "ReplicationNames",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "Replay",
            dependencies: [
                "BLIPCore", "Capture", "Replication", "ReplicationNames", "BLIPNIO",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ]
        ),
        .target(
            name: "Soak",
            dependencies: [
                "BLIPCore", "BLIPNIO", "Gateway", "Capture", "MetricCatalog",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            // What both executables' commands share: the log sink, glibc's copy tuning, status lines.
            name: "CommandLineSupport",
            dependencies: ["Relay", .product(name: "Logging", package: "swift-log")]
        ),
        .executableTarget(
            name: "blipscope",
            dependencies: [
                "BLIPCore", "Capture", "CZlib", "CISAL", "BLIPNIO", "Relay", "Replication", "Gateway", "Replay", "Mediation", "Policy",
                "WebView", "CMalloc", "SyncGatewayLog", "CommandLineSupport", "FleetLimits", "RedisClient",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                // The second SIGTERM of a drain (the group's own signal sequence ends at the first).
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
        .executableTarget(
            name: "blipscope-bench",
            dependencies: [
                "BLIPCore", "BLIPNIO", "Capture", "CZlib", "CISAL", "Gateway", "Policy", "Relay", "Replication", "ReplicationNames",
                "Soak", "CommandLineSupport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
        .target(
            name: "BLIPTestSupport",
            dependencies: ["BLIPCore", .product(name: "NIOCore", package: "swift-nio")],
            path: "Tests/BLIPTestSupport"
        ),
        .testTarget(name: "BatchLockTests", dependencies: ["BatchLock"]),
        .testTarget(
            name: "BLIPCoreTests",
            dependencies: ["BLIPCore", "BLIPTestSupport", "CZlib"]
        ),
        .testTarget(
            name: "SyncGatewayLogTests",
            dependencies: ["SyncGatewayLog"],
            resources: [.copy("Fixtures")]
        ),
        .testTarget(
            name: "WebSocketWireTests",
            dependencies: ["WebSocketWire", .product(name: "NIOCore", package: "swift-nio")]
        ),
        .testTarget(
            name: "MediationTests",
            dependencies: ["Mediation", "BLIPCore", "BLIPTestSupport",
                           .product(name: "NIOCore", package: "swift-nio")]
        ),
        .testTarget(
            name: "MediationRulesTests",
            dependencies: ["MediationRules", "Mediation", "Policy", "BLIPCore", "ReplicationNames",
                           .product(name: "NIOCore", package: "swift-nio")]
        ),
        .testTarget(
            name: "ReplicationTests",
            dependencies: ["Replication", "BLIPCore", "BLIPTestSupport"],
            resources: [.copy("Fixtures")]
        ),
        .testTarget(
            name: "RelayTests",
            dependencies: [
                "Relay", "Gateway", "WebView", "MetricCatalog", "Capture", "BLIPNIO", "BLIPCore", "BLIPTestSupport", "Policy", "WebSocketWire", "Mediation", "MediationRules",
                "ReplicationNames", "ProxyProtocol",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ]
        ),
        .testTarget(
            name: "GatewayTests",
            dependencies: [
                "Gateway", "Relay", "Policy", "BLIPNIO", "BLIPCore", "Replication", "BLIPTestSupport", "WebView", "Capture", "SyncGatewayLog",
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "ReplayTests",
            dependencies: [
                "Replay", "Gateway", "Relay", "Capture", "BLIPNIO", "BLIPCore", "Replication", "BLIPTestSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            resources: [.copy("Fixtures")]
        ),
        .testTarget(
            name: "RedisClientTests",
            dependencies: [
                "RedisClient", "BLIPTestSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "FleetLimitsTests",
            dependencies: [
                "FleetLimits", "Policy", "RedisClient", "Relay", "Gateway", "BLIPNIO", "BLIPCore", "BLIPTestSupport", "MetricCatalog",
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "ProxyProtocolTests",
            dependencies: ["ProxyProtocol"]
        ),
        .testTarget(
            name: "PolicyTests",
            dependencies: ["Policy", "BLIPCore", "BLIPTestSupport", .product(name: "NIOConcurrencyHelpers", package: "swift-nio")]
        ),
        .testTarget(
            name: "InteropTests",
            dependencies: [
                "Gateway", "Relay", "Replay", "Policy", "Capture", "BLIPNIO", "BLIPCore", "Replication", "BLIPTestSupport", "WebView",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "WebViewTests",
            dependencies: ["WebView", "Capture", "BLIPCore", "Replication", "SyncGatewayLog", .product(name: "NIOCore", package: "swift-nio"),
                           .product(name: "NIOEmbedded", package: "swift-nio"), .product(name: "NIOHTTP1", package: "swift-nio")]
        ),
        .testTarget(
            name: "SoakTests",
            dependencies: ["Soak", "BLIPTestSupport"]
        ),
        .testTarget(
            name: "BenchTests",
            dependencies: ["blipscope-bench", "CommandLineSupport", "Replication", "BLIPTestSupport"]
        ),
        .testTarget(
            name: "CaptureTests",
            dependencies: ["Capture", "BLIPCore", "BLIPTestSupport", "WebSocketWire"],
            resources: [.copy("Fixtures")]
        ),
    ]
)
