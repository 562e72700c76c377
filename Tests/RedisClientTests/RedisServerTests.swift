import BLIPTestSupport
import NIOCore
@testable import RedisClient
import Testing

/// The client against a real redis-server that each test starts on a free loopback port and
/// stops: the commands the fleet uses, AUTH, SELECT, pipelining, scripts, timeouts, reconnects.
@Suite(.timeLimit(.minutes(5))) struct RedisServerTests {
    typealias Clients = RedisTestClients

    @Test func theFleetsCommandsAgainstARealServer() async throws {
        try await RedisServerProcess.with { server in
            try await Clients.withClient(Clients.configuration(server.url)) { redis in
                #expect(try await redis.ping() == "PONG")
                #expect(try await redis.get("missing") == nil)
                #expect(try await redis.set("k", to: "v1", expiration: .milliseconds(60_000)))
                #expect(try await redis.get("k") == ByteBuffer(string: "v1"))
                let ttl = try await redis.send(RESPCommand("PTTL", "k")).integer ?? -1
                #expect(ttl > 0 && ttl <= 60_000)
                #expect(try await redis.set("k", to: "v2", condition: .ifAbsent) == false)
                #expect(try await redis.set("absent", to: "x", condition: .ifPresent) == false)
                #expect(try await redis.set("k", to: ByteBuffer(bytes: [0, 0xFF, 0x0D, 0x0A]), expiration: .seconds(60), condition: .ifPresent))
                #expect(try await redis.get("k") == ByteBuffer(bytes: [0, 0xFF, 0x0D, 0x0A]))
                #expect(try await redis.incrby("tokens", by: 10) == 10)
                #expect(try await redis.incrby("tokens", by: -3) == 7)
                #expect(try await redis.expire("tokens", after: .seconds(100)))
                #expect(try await redis.expire("tokens", after: .milliseconds(5_000)))
                #expect(try await redis.send(RESPCommand("PTTL", "tokens")).integer ?? 0 <= 5_000)
                #expect(try await redis.expire("missing", after: .seconds(1)) == false)
                #expect(try await redis.del(["k", "tokens", "missing"]) == 2)

                let time = try await redis.time()
                #expect(time.seconds > 1_600_000_000 && (0..<1_000_000).contains(time.microseconds))

                #expect(try await redis.hset("session:a", fields: [("user", ByteBuffer(string: "alice")), ("relay", ByteBuffer(string: "r1"))]) == 2)
                #expect(try await redis.hgetall("session:a") == ["user": ByteBuffer(string: "alice"), "relay": ByteBuffer(string: "r1")])
                #expect(try await redis.hgetall("session:none") == [:])

                #expect(try await redis.zadd("sessions", members: [(100, "a"), (200, "b"), (300, "c")]) == 3)
                #expect(try await redis.zadd("sessions", members: [(150, "a")]) == 0, "a heartbeat moves the score")
                #expect(try await redis.zrangebyscore("sessions", min: 150, max: .infinity) == ["a", "b", "c"])
                #expect(try await redis.zrangebyscore("sessions", min: -.infinity, max: .infinity, limit: 2) == ["a", "b"])
                #expect(try await redis.zremrangebyscore("sessions", min: -.infinity, max: 199) == 1)
                #expect(try await redis.zcard("sessions") == 2)
                #expect(try await redis.zrem("sessions", members: ["b", "zz"]) == 1)
                #expect(try await redis.zrangebyscore("sessions", min: -.infinity, max: .infinity) == ["c"])
            }
        }
    }

    @Test func anErrorReplyThrowsAndTheConnectionGoesOn() async throws {
        try await RedisServerProcess.with { server in
            try await Clients.withClient(Clients.configuration(server.url)) { redis in
                try await redis.hset("h", fields: [("f", ByteBuffer(string: "1"))])
                let error = await Clients.error { _ = try await redis.incrby("h", by: 1) }
                #expect(error?.code == .serverError)
                #expect(error?.isServerError("WRONGTYPE") == true, "\(String(describing: error))")
                let unknown = await Clients.error { _ = try await redis.send(RESPCommand("NOSUCHCOMMAND")) }
                #expect(unknown?.serverMessage?.hasPrefix("ERR unknown command") == true)
                #expect(try await redis.ping() == "PONG")
            }
        }
    }

    @Test func authWithTheRightPasswordTheWrongOneAndNone() async throws {
        try await RedisServerProcess.with(password: "right-pass") { server in
            let right = try Clients.configuration("redis://:right-pass@127.0.0.1:\(server.port)")
            try await Clients.withConnection(right) { connection in
                let pong = try await connection.ping()
                #expect(pong == "PONG")
            }
            let withUser = try Clients.configuration("redis://default:right-pass@127.0.0.1:\(server.port)")
            try await Clients.withConnection(withUser) { connection in
                let pong = try await connection.ping()
                #expect(pong == "PONG")
            }

            let wrong = try Clients.configuration("redis://:wrong-pass@127.0.0.1:\(server.port)")
            let refused = await Clients.error { _ = try await RedisConnection.connect(configuration: wrong) }
            #expect(refused?.code == .authenticationFailed)
            #expect(refused?.serverMessage?.hasPrefix("WRONGPASS") == true, "\(String(describing: refused))")
            #expect(refused?.description.contains("wrong-pass") == false)

            let none = try Clients.configuration("redis://127.0.0.1:\(server.port)")
            let unauthenticated = await Clients.error { _ = try await RedisConnection.connect(configuration: none) }
            #expect(unauthenticated?.code == .authenticationFailed)
            #expect(unauthenticated?.isServerError("NOAUTH") == true, "\(String(describing: unauthenticated))")

            // A client with the wrong password keeps trying, and says why it is not connected.
            let client = try RedisClient(configuration: wrong, logger: Clients.quiet)
            client.start()
            let waited = await Clients.error { try await client.waitForConnection(within: .seconds(2)) }
            #expect(waited?.code == .notConnected)
            let failedCommand = await Clients.error { _ = try await client.ping() }
            #expect(failedCommand?.code == .notConnected)
            #expect(failedCommand?.description.contains("refused the connection's credentials") == true,
                    "\(String(describing: failedCommand))")
            await client.shutdown()
            #expect(await Clients.error { _ = try await client.ping() }?.code == .shutDown)
        }
    }

    @Test func theURLsDatabaseIsSelected() async throws {
        try await RedisServerProcess.with { server in
            try await Clients.withConnection(Clients.configuration(server.url + "/3")) { db3 in
                try await db3.set("where", to: "three")
                try await Clients.withConnection(Clients.configuration(server.url)) { db0 in
                    #expect(try await db0.get("where") == nil)
                    _ = try await db0.send(RESPCommand("SELECT", "3"))
                    #expect(try await db0.get("where") == ByteBuffer(string: "three"))
                }
            }
            let outOfRange = try Clients.configuration(server.url + "/99")
            let error = await Clients.error { _ = try await RedisConnection.connect(configuration: outOfRange) }
            #expect(error?.code == .connectFailed)
            #expect(error?.description.contains("DB index is out of range") == true, "\(String(describing: error))")
        }
    }

    @Test func athousandPipelinedCommandsAreAnsweredInOrder() async throws {
        try await RedisServerProcess.with { server in
            try await Clients.withConnection(Clients.configuration(server.url)) { connection in
                // Paused, the server answers nothing: all 1000 are in flight on the connection at once.
                try await server.pause()
                let replies = (0..<1_000).map { connection.send(RESPCommand("ECHO", "reply-\($0)"), timeout: .seconds(60)) }
                server.resume()
                for (index, reply) in replies.enumerated() {
                    #expect(try await reply.get() == .bulkString("reply-\(index)"))
                }
                // And from many tasks at once, each gets its own reply.
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for index in 0..<1_000 {
                        group.addTask {
                            let value = try await connection.send(RESPCommand("INCRBY", "counter", "\(index)"))
                            #expect(value.integer != nil)
                        }
                    }
                    try await group.waitForAll()
                }
                #expect(try await connection.get("counter") == ByteBuffer(string: "\(999 * 1_000 / 2)"))
            }
        }
    }

    @Test func aCommandBeyondThePendingLimitFailsAtOnce() async throws {
        try await RedisServerProcess.with { server in
            try await Clients.withConnection(Clients.configuration(server.url, limits: Clients.limits(maxPendingCommands: 10))) { connection in
                try await server.pause()
                let admitted = (0..<10).map { connection.send(RESPCommand("ECHO", "\($0)"), timeout: .seconds(60)) }
                let refused = await Clients.error { _ = try await connection.send(RESPCommand("PING")) }
                #expect(refused?.code == .limitExceeded)
                #expect(refused?.description.contains("maxPendingCommands") == true)
                server.resume()
                for (index, reply) in admitted.enumerated() { #expect(try await reply.get() == .bulkString("\(index)")) }
                #expect(try await connection.ping() == "PONG", "the connection stayed up")
            }
        }
    }

    @Test func evalshaFallsBackToEvalWhenTheServerLostTheScript() async throws {
        try await RedisServerProcess.with { server in
            try await Clients.withClient(Clients.configuration(server.url)) { redis in
                // A batch of tokens: add ARGV[1] to the counter, give it a TTL, return the total.
                let source = "local n = redis.call('INCRBY', KEYS[1], ARGV[1]) redis.call('PEXPIRE', KEYS[1], ARGV[2]) return n"
                let script = try await redis.scriptLoad(source)
                #expect(script.sha1.count == 40)
                #expect(try await redis.evaluate(script, keys: ["fleet:tokens"], arguments: ["5", "60000"]) == .integer(5))
                _ = try await redis.send(RESPCommand("SCRIPT", "FLUSH"))
                let missing = await Clients.error {
                    _ = try await redis.send(RESPCommand("EVALSHA", script.sha1, "1", "fleet:tokens", "5", "60000"))
                }
                #expect(missing?.isServerError("NOSCRIPT") == true, "the script is really gone: \(String(describing: missing))")
                #expect(try await redis.evaluate(script, keys: ["fleet:tokens"], arguments: ["5", "60000"]) == .integer(10))
                #expect(try await redis.send(RESPCommand("SCRIPT", "EXISTS", script.sha1)) == .array([.integer(1)]),
                        "EVAL loaded it again")
                let broken = try await redis.scriptLoad("return redis.call('INCRBY', KEYS[1], 'x')")
                let error = await Clients.error { _ = try await redis.evaluate(broken, keys: ["k"]) }
                #expect(error?.code == .serverError, "a failing script's error is not taken for NOSCRIPT")
            }
        }
    }

    @Test func aCommandTimesOutWhileTheServerIsPausedAndTheClientComesBack() async throws {
        try await RedisServerProcess.with { server in
            // Connected means the handshake's PING was answered; paused, the server answers nothing.
            let limits = Clients.limits(commandTimeout: .seconds(1), connectTimeout: .seconds(2))
            try await Clients.withClient(Clients.configuration(server.url, limits: limits)) { redis in
                try await server.pause()
                let timedOut = await Clients.error { _ = try await redis.ping() }
                #expect(timedOut?.code == .timedOut)
                #expect(timedOut?.description.contains("did not answer PING within 1 s") == true, "\(String(describing: timedOut))")
                server.resume()
                let answered = try await Clients.answersAfterReconnecting(redis)
                #expect(answered, "PING works on the new connection")
            }
        }
    }

    @Test func theClientReconnectsAfterTheServerIsKilledAndRestarted() async throws {
        try await RedisServerProcess.with { server in
            let log = RecordedLog()
            try await Clients.withClient(Clients.configuration(server.url), logger: log.logger) { redis in
                let script = try await redis.scriptLoad("return 'ran'")
                try await redis.set("before", to: "1")
                try await server.kill()
                let lost = await Clients.error { _ = try await redis.ping() }
                #expect(lost?.code == .closed || lost?.code == .notConnected, "\(String(describing: lost))")
                let whileDown = await Clients.error { _ = try await redis.ping() }
                #expect(whileDown?.code == .notConnected, "no connection, so the command failed at once: \(String(describing: whileDown))")
                try await log.waitForLine { $0.contains("cannot connect to redis") }
                try await server.restart()
                try await redis.waitForConnection(within: .seconds(60))
                #expect(try await redis.ping() == "PONG")
                #expect(try await redis.get("before") == nil, "a new server, with nothing saved")
                #expect(try await redis.evaluate(script) == .bulkString("ran"), "EVAL stood in for EVALSHA")
            }
            #expect(log.lines.contains { $0.contains("lost the connection to redis") }, "\(log.lines)")
            #expect(log.lines.contains { $0.contains("cannot connect to redis") && $0.contains("reason=") }, "\(log.lines)")
        }
    }

    @Test func aConnectionToAClosedPortFails() async throws {
        let closed = try ClosedPort()
        let configuration = try Clients.configuration("redis://127.0.0.1:\(closed.port)")
        let error = await Clients.error { _ = try await RedisConnection.connect(configuration: configuration) }
        #expect(error?.code == .connectFailed)
        #expect(error?.description.hasPrefix("Could not connect to redis at redis://127.0.0.1:\(closed.port)/0") == true)
    }
}
