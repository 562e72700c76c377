import BLIPCore
import Foundation
import Gateway
import NIOCore
import Replication
import Testing

/// Replicator ↔ gateway on loopback: real sockets, real protocol, both directions.
@Suite struct ReplicatorTests {
    static func seedGateway(_ database: GatewayDatabase) throws {
        try database.put("alpha", body: ["name": .string("Alpha"), "channels": .string("red")])
        try database.put("beta", body: ["name": .string("Beta"), "channels": .string("blue")],
                         attachments: ["note.txt": Attachment(contentType: "text/plain", data: Array("hello".utf8))])
        try database.put("gone", body: ["name": .string("Gone")])
        try database.delete("gone")
        try database.put("alpha", body: ["name": .string("Alpha 2"), "channels": .string("red")])
    }

    @Test func pullBringsDocumentsTombstonesAndAttachmentsByteEqual() async throws {
        try await withGateway(seed: Self.seedGateway) { gateway in
            let local = GatewayDatabase(name: "local")
            let result = try await gateway.replicator(.pull, into: local).run()
            #expect(result.pulledRevisions == 3)
            #expect(result.pulledAttachments == 1)
            #expect(result.subprotocol == "BLIP_3+CBMobile_3")
            #expect(documentsMatch(gateway.database, local))
            #expect(local.document("gone")?.isDeleted == true)
            #expect(local.document("alpha")?.history.count == 1)
            #expect(local.attachment(digest: GatewayDatabase.attachmentDigest(of: Array("hello".utf8))) != nil)
        }
    }

    @Test func pushSendsDocumentsTombstonesAndAttachmentsByteEqual() async throws {
        try await withGateway { gateway in
            let local = GatewayDatabase(name: "local")
            try Self.seedGateway(local)
            let result = try await gateway.replicator(.push, into: local).run()
            #expect(result.pushedRevisions == 3)
            #expect(result.pushedAttachments == 1)
            #expect(result.conflicts.isEmpty)
            #expect(documentsMatch(local, gateway.database))
            #expect(gateway.database.hasAttachment(digest: GatewayDatabase.attachmentDigest(of: Array("hello".utf8))))
        }
    }

    @Test func pushWithChangesAgainstAConflictTolerantPeer() async throws {
        try await withGateway(configure: { $0.conflictFree = false }) { gateway in
            let local = try GatewayDatabase.seeded(count: 5)
            let result = try await gateway.replicator(.push, into: local).run()
            #expect(result.pushedRevisions == 5)
            #expect(documentsMatch(local, gateway.database))
        }
    }

    @Test func aSecondOneShotPullTransfersNothing() async throws {
        try await withGateway(seed: { try Self.seedGateway($0) }) { gateway in
            let local = GatewayDatabase(name: "local")
            let first = try await gateway.replicator(.pull, into: local).run()
            #expect(first.pulledRevisions == 3)
            let second = try await gateway.replicator(.pull, into: local).run()
            #expect(second.pulledRevisions == 0)
            #expect(second.skippedRevisions == 0)
            try gateway.database.put("delta", body: ["name": .string("Delta")])
            let third = try await gateway.replicator(.pull, into: local).run()
            #expect(third.pulledRevisions == 1)
        }
    }

    /// Each revision pulled moves the checkpoint on; the notes are saved in the order they were
    /// made, and the run ends only after the last is saved, so the gateway holds the last sequence.
    @Test func aOneShotPullLeavesTheLastSequenceAsItsCheckpoint() async throws {
        try await withGateway(seed: { database in
            for index in 0..<120 { try database.put("doc-\(index)", body: ["n": .number(String(index))]) }
        }) { gateway in
            let local = GatewayDatabase(name: "local")
            let pull = try await gateway.replicator(.pull, into: local) {
                $0.checkpointID = "in-order"
                $0.limits.changesBatchSize = 10
            }.run()
            #expect(pull.pulledRevisions == 120)
            let checkpoint = gateway.database.checkpoint(client: "in-order")
            #expect(checkpoint?.body.objectValue?["remote"]?.description == String(gateway.database.lastSequence))
        }
    }

    @Test func continuousPullSeesALaterChange() async throws {
        try await withGateway(seed: Self.seedGateway) { gateway in
            let local = GatewayDatabase(name: "local")
            let replicator = gateway.replicator(.pull, into: local) { $0.continuous = true }
            let running = Task { try await replicator.run() }
            await waitUntil(local) { $0.documentCount() == 3 }
            let rev = try gateway.database.put("later", body: ["when": .string("after caught up")])
            await waitUntil(local) { $0.document("later")?.currentRevID == rev }
            replicator.stop()
            let result = try await running.value
            #expect(result.pulledRevisions == 4)
        }
    }

    @Test func continuousPushSendsALaterLocalChange() async throws {
        try await withGateway { gateway in
            let local = try GatewayDatabase.seeded(count: 2)
            let replicator = gateway.replicator(.push, into: local) { $0.continuous = true }
            let running = Task { try await replicator.run() }
            await waitUntil(gateway.database) { $0.documentCount() == 2 }
            let rev = try local.put("later", body: ["when": .string("after caught up")])
            await waitUntil(gateway.database) { $0.document("later")?.currentRevID == rev }
            replicator.stop()
            let result = try await running.value
            #expect(result.pushedRevisions == 3, "the two seeded documents, then the later one")
            #expect(result.conflicts.isEmpty && result.documentErrors.isEmpty)
            #expect(documentsMatch(local, gateway.database), "the later one arrived with its body")
            #expect(gateway.database.document("later")?.isDeleted == false)
        }
    }

    @Test func conflictingPushIsRefusedWith409AndSurfaced() async throws {
        try await withGateway(seed: Self.seedGateway) { gateway in
            let local = GatewayDatabase(name: "local")
            _ = try await gateway.replicator(.pull, into: local).run()
            try local.put("alpha", body: ["name": .string("edited locally")])
            let theirs = try gateway.database.put("alpha", body: ["name": .string("edited on the server")])
            try local.put("fresh", body: [:])
            let result = try await gateway.replicator(.push, into: local).run()
            #expect(result.conflicts.map(\.docID) == ["alpha"])
            #expect(result.conflicts.first?.side == .push)
            #expect(result.pushedRevisions == 1)
            #expect(gateway.database.document("alpha")?.currentRevID == theirs)
        }
    }

    @Test func pullingAConflictingRevisionIsSurfaced() async throws {
        try await withGateway(seed: Self.seedGateway) { gateway in
            let local = GatewayDatabase(name: "local")
            _ = try await gateway.replicator(.pull, into: local).run()
            try local.put("beta", body: ["mine": .bool(true)])
            try gateway.database.put("beta", body: ["theirs": .bool(true)])
            let result = try await gateway.replicator(.pull, into: local).run()
            #expect(result.conflicts.map(\.docID) == ["beta"])
            #expect(local.document("beta")?.conflictingRevIDs.count == 1)
        }
    }

    @Test func namedCollectionsReplicateThroughGetCollections() async throws {
        let hotels = CollectionPath(scope: "inventory", name: "hotels")
        try await withGateway(seed: { try $0.put("h1", body: ["name": .string("Ritz")], in: hotels) }) { gateway in
            let local = GatewayDatabase(name: "local", collections: [hotels])
            let result = try await gateway.replicator(.pushAndPull, into: local) { $0.collections = [hotels] }.run()
            #expect(result.pulledRevisions == 1)
            #expect(documentsMatch(gateway.database, local, in: hotels))
            let missing = gateway.replicator(.pull, into: local) { $0.collections = [CollectionPath(scope: "x", name: "y")] }
            await #expect(throws: GatewayError.self) { _ = try await missing.run() }
        }
    }

    @Test func channelFilterPullsOnlyThatChannel() async throws {
        try await withGateway(seed: Self.seedGateway) { gateway in
            let local = GatewayDatabase(name: "local")
            _ = try await gateway.replicator(.pull, into: local) { $0.channels = ["red"] }.run()
            #expect(local.documentIDs() == ["alpha"])
        }
    }
}
