import BLIPTestSupport
import NIOCore
@testable import RedisClient
import Testing

/// A broken or hostile server over a real socket (``ScriptedRedisServer``): whatever it sends,
/// the command fails, the connection ends with a logged reason, and nothing grows past the
/// limits.
@Suite(.timeLimit(.minutes(5))) struct RedisHostileServerTests {
    typealias Clients = RedisTestClients
    static let pong = Array("+PONG\r\n".utf8)

    /// Connects to a server that answers the handshake's PING, then `reply` to the next command;
    /// returns that command's error and why the connection ended.
    static func outcome(limits: RedisLimits = Clients.limits(), of reply: [UInt8]) async throws -> (error: RedisError?, ended: RedisError) {
        let server = try await ScriptedRedisServer { _, number in number == 0 ? pong : reply }
        do {
            let connection = try await RedisConnection.connect(configuration: Clients.configuration("redis://127.0.0.1:\(server.port)", limits: limits))
            let error = await Clients.error { _ = try await connection.send(RESPCommand("GET", "k")) }
            let ended = await connection.endReason()
            await connection.close()
            await server.close()
            return (error, ended)
        } catch {
            await server.close()
            throw error
        }
    }

    @Test func aHugeBulkStringEndsTheConnection() async throws {
        let (error, ended) = try await Self.outcome(of: Array("$2000000000\r\n".utf8))
        #expect(error?.code == .limitExceeded)
        #expect(error?.description.contains("maxBulkLength") == true)
        #expect(ended == error)
    }

    @Test func anEndlessLineEndsTheConnectionOnceItPassesTheLimit() async throws {
        let limits = RedisLimits(maxLineLength: 1_024, connectTimeout: .seconds(30), commandTimeout: .seconds(30))
        let (error, _) = try await Self.outcome(limits: limits, of: [UInt8(ascii: "+")] + [UInt8](repeating: 0x61, count: 200_000))
        #expect(error?.code == .limitExceeded)
        #expect(error?.description.contains("maxLineLength") == true)
    }

    @Test func deepNestingAndGarbageEndTheConnection() async throws {
        let deep = try await Self.outcome(of: Array(String(repeating: "*1\r\n", count: 100).utf8))
        #expect(deep.error?.code == .limitExceeded)
        #expect(deep.error?.description.contains("maxNestingDepth") == true)
        let garbage = try await Self.outcome(of: Array("HTTP/1.1 400 Bad Request\r\n\r\n".utf8))
        #expect(garbage.error?.code == .protocolViolation)
        let resp3 = try await Self.outcome(of: Array("%1\r\n+a\r\n+b\r\n".utf8))
        #expect(resp3.error?.description.contains("RESP3") == true)
    }

    @Test func aReplyNoCommandWaitsForEndsTheConnection() async throws {
        let (error, ended) = try await Self.outcome(of: Array("$1\r\nv\r\n+surprise\r\n".utf8))
        #expect(error == nil, "the command got its reply")
        #expect(ended.code == .protocolViolation)
        #expect(ended.description.contains("no command was waiting"))
    }

    @Test func aServerThatClosesFailsTheCommandInFlight() async throws {
        let server = try await ScriptedRedisServer { _, number in number == 0 ? Self.pong : nil }
        let connection = try await RedisConnection.connect(configuration: Clients.configuration("redis://127.0.0.1:\(server.port)"))
        let error = await Clients.error { _ = try await connection.get("k") }
        #expect(error?.code == .closed)
        #expect(error?.description.contains("the server closed the connection") == true, "\(String(describing: error))")
        #expect(await Clients.error { _ = try await connection.ping() }?.code == .closed, "an ended connection fails at once")
        await connection.close()
        await server.close()
    }

    @Test func closingTheConnectionFailsTheCommandInFlight() async throws {
        let server = try await ScriptedRedisServer { _, number in number == 0 ? Self.pong : [] }
        let connection = try await RedisConnection.connect(configuration: Clients.configuration("redis://127.0.0.1:\(server.port)"))
        let reply = connection.send(RESPCommand("GET", "k"), timeout: TimeAmount.seconds(60))
        await connection.close()
        #expect(await Clients.error { _ = try await reply.get() }?.code == .shutDown)
        #expect(await Clients.error { _ = try await connection.ping() }?.code == .shutDown)
        await server.close()
    }

    @Test func theClientLogsWhyItDroppedAConnectionAndConnectsAgain() async throws {
        let server = try await ScriptedRedisServer { command, _ in
            command.first == "GET" ? Array("$99999999999\r\n".utf8) : Self.pong
        }
        let log = RecordedLog()
        do {
            try await Clients.withClient(Clients.configuration("redis://127.0.0.1:\(server.port)"), logger: log.logger) { redis in
                let error = await Clients.error { _ = try await redis.get("k") }
                #expect(error?.code == .limitExceeded)
                let answered = try await Clients.answersAfterReconnecting(redis)
                #expect(answered, "PING works on the new connection")
            }
            #expect(log.lines.contains { $0.contains("lost the connection to redis") && $0.contains("maxBulkLength") }, "\(log.lines)")
            await server.close()
        } catch {
            await server.close()
            throw error
        }
    }
}
