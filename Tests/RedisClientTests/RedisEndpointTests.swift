import RedisClient
import Testing

/// `redis://` and `rediss://` URLs: what each part becomes, the errors in words, and
/// credentials that never show.
@Suite struct RedisEndpointTests {
    @Test func readsEachPartWithDefaults() throws {
        #expect(try RedisEndpoint(url: "redis://127.0.0.1") == RedisEndpoint(host: "127.0.0.1"))
        #expect(try RedisEndpoint(url: "redis://cache.internal:6380/3")
                == RedisEndpoint(host: "cache.internal", port: 6380, database: 3))
        #expect(try RedisEndpoint(url: "REDISS://h:1/") == RedisEndpoint(host: "h", port: 1, usesTLS: true))
        #expect(try RedisEndpoint(url: "redis://:pw@h") == RedisEndpoint(host: "h", password: "pw"))
        #expect(try RedisEndpoint(url: "rediss://relay:p%40ss%3Aw@h:7000/2")
                == RedisEndpoint(host: "h", port: 7000, database: 2, user: "relay", password: "p@ss:w", usesTLS: true))
        #expect(try RedisEndpoint(url: "redis://u:a@b@h").password == "a@b", "the last @ ends the credentials")
        #expect(try RedisEndpoint(url: "redis://[::1]:6390/1") == RedisEndpoint(host: "::1", port: 6390, database: 1))
        #expect(try RedisEndpoint(url: "redis://[::1]").port == 6379)
    }

    @Test func errorsSayWhatIsWrong() {
        let cases: [(String, String)] = [
            ("redis://", "has no host"), ("redis://:6379/0", "has no host"), ("redis://:pw@:1", "has no host"),
            ("127.0.0.1:6379", "has no scheme"), ("http://h", "has the scheme http://"),
            ("redis://h:0", "not a number from 1 to 65535"), ("redis://h:65536", "not a number from 1 to 65535"),
            ("redis://h:x1", "not a number from 1 to 65535"), ("redis://h/db", "not a database number"),
            ("redis://h/-1", "not a database number"), ("redis://h/0?timeout=1", "options after ? or #"),
            ("redis://pw@h", "credentials without a colon"), ("redis://u:%zz@h", "malformed percent escape"),
            ("redis://u:@h", "empty password"), ("redis://[::1", "closing ]"), ("redis://[::1]x", "not :PORT"),
        ]
        for (url, words) in cases {
            do {
                _ = try RedisEndpoint(url: url)
                Issue.record("\(url) was accepted")
            } catch {
                #expect(error.code == .invalidURL)
                #expect(error.description.contains(words), "\(url): \(error.description)")
                #expect(error.description.hasPrefix("The redis URL "))
            }
        }
    }

    @Test func credentialsNeverShow() throws {
        let endpoint = try RedisEndpoint(url: "rediss://relay:hunter2@cache:6380/1")
        #expect(endpoint.description == "rediss://***@cache:6380/1")
        #expect(String(reflecting: endpoint) == endpoint.description)
        var dumped = ""
        dump(endpoint, to: &dumped)
        #expect(!dumped.contains("hunter2") && !dumped.contains("relay"), "\(dumped)")
        #expect(RedisEndpoint(host: "::1", port: 1).description == "redis://[::1]:1/0")
        do {
            _ = try RedisEndpoint(url: "redis://relay:hunter2@cache:99999")
            Issue.record("port 99999 was accepted")
        } catch {
            #expect(!error.description.contains("hunter2") && !error.description.contains("relay"), "\(error.description)")
            #expect(error.description.contains("redis://***@cache:99999"))
        }
        do {
            _ = try RedisEndpoint(url: "relay:hunter2@cache")
            Issue.record("a URL without scheme was accepted")
        } catch {
            #expect(!error.description.contains("hunter2"), "\(error.description)")
        }
    }
}
