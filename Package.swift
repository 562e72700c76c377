// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "BlipScope",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "blipscope", targets: ["blipscope"]),
        .library(name: "BLIPCore", targets: ["BLIPCore"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "3.12.3"),
    ],
    targets: [
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        .systemLibrary(name: "CPcap", providers: [.apt(["libpcap-dev"])]),
        .target(
            name: "BLIPCore",
            dependencies: ["CZlib", .product(name: "NIOCore", package: "swift-nio")]
        ),
        .target(
            name: "Capture",
            dependencies: [
                "BLIPCore", "CPcap",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        .executableTarget(
            name: "blipscope",
            dependencies: [
                "BLIPCore", "Capture",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
        .target(
            name: "BLIPTestSupport",
            dependencies: ["BLIPCore", .product(name: "NIOCore", package: "swift-nio")],
            path: "Tests/BLIPTestSupport"
        ),
        .testTarget(
            name: "BLIPCoreTests",
            dependencies: ["BLIPCore", "BLIPTestSupport"]
        ),
        .testTarget(
            name: "CaptureTests",
            dependencies: ["Capture", "BLIPCore", "BLIPTestSupport"],
            resources: [.copy("Fixtures")]
        ),
    ]
)
