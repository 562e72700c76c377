import Foundation
import Testing
@testable import Policy

/// Inputs the fuzzer (Fuzz/, `fuzz-policy`) found crashing policy parsing, each kept as found.
@Suite("Policy files the fuzzer found")
struct PolicyFuzzRegressionTests {
    /// fuzz-policy crash-608f1a10: 2,409 nested flow mappings (`{{{{…`) overflowed the stack in
    /// Yams' recursive composer; a reload would have taken the relay down.
    static let deepFlowNesting = Data(base64Encoded: [
        "e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7",
        "e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7",
        "e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7",
        "e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7",
        "e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7",
        "e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7",
        "e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3tCOgogICB7e3t7e3t7e3t7e3t7e3t7e3t7",
        "e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7",
        "e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7",
        "e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7",
        "e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7",
        "e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7",
        "e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7",
        "e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7",
        "e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7",
        "e3t7e3t7e3t7e3t7e3t7e0I6CiAgIHt7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7",
        "e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7",
        "e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7",
        "e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7",
        "e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7",
        "e3t7QjoKICAge3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7",
        "e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7",
        "e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7",
        "e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7QjoKICAge3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7",
        "e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7",
        "e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7Qnt7e3t7e3t7e3t7e3t7e3t7e3tCOgog",
        "ICB7e3t7e3t7e3N7e3t7e3t7e3t7e3s0S0J7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7",
        "e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e0I6CiAgIHt7e3t7e3t7e3t7",
        "e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7",
        "e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7",
        "e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7",
        "e3t7e3t7e3t7e0I6CiAgIHt7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7",
        "e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7",
        "e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e0J7e3t7e3t7e3t7e3t7e3t7e3t7QjoKICAge3t7e3t7e3tze3t7e3t7e3t7",
        "e3t7NEtCe3t7e3t7e3t7e3t7e0I6CiAgICFnbWE="
    ].joined())!

    @Test("collections nested thousands deep are a clean error, not a stack overflow")
    func deepFlowNestingIsRefused() {
        let yaml = String(decoding: Self.deepFlowNesting, as: UTF8.self)
        #expect(Self.deepFlowNesting.count == 2_477)
        #expect(throws: PolicyError.self) { try PolicyDocument(yaml: yaml) }
        do {
            _ = try PolicyDocument(yaml: yaml)
        } catch {
            #expect(error.description.contains("nested more than \(PolicyDocument.maxNesting) levels"))
        }
    }

    @Test("every way of nesting deeply is refused: flow sequences, block sequences on one line, indentation")
    func otherDeepNestingIsRefused() {
        let flow = String(repeating: "[", count: 100_000)
        let compact = String(repeating: "- ", count: 100_000) + "x"
        let indented = (0..<200).map { String(repeating: " ", count: $0) + "k\($0):" }.joined(separator: "\n") + " v"
        for yaml in [flow, compact, indented] {
            #expect(throws: PolicyError.self) { try PolicyDocument(yaml: yaml) }
        }
    }

    @Test("nesting up to the limit is still read: the error is about the rules, not the depth")
    func nestingAtTheLimitIsRead() {
        let depth = PolicyDocument.maxNesting - 2  // the file's mapping and the rule list come first
        let yaml = "rules: [" + String(repeating: "[", count: depth) + String(repeating: "]", count: depth) + "]"
        do {
            _ = try PolicyDocument(yaml: yaml)
            Issue.record("a list of lists is not a rule")
        } catch {
            #expect(!error.description.contains("nested"))
        }
    }

    /// fuzz-policy crash-52a7199f: the sample policy with a delay of `2222…2210ms` (90 digits): its
    /// nanoseconds did not fit a UInt64 and the conversion trapped.
    static let hugeDelay = Data(base64Encoded: [
        "IyBCbGlwU2NvcGUgcmVsYfv7+/v7+/v7+/v7+/v7+/v7+/v7+/v7+/v7+/v7+/v7+/v7+/v7+/v7+/v7+/v7+/v7+/v7+/v7",
        "+/v7+/v7+/v7+/v7+/v7+/v7+/v7+/v7+/v7+/v7+/v7+/v7+/v7+/v7+/v7+/v7+/tsIG9uZSBkZW5pZXMvZHJvcHMvY2xv",
        "c2VzLgpydWxlczoKICAjIG1hdGNoIGtleXMgKGFsbCBvcHRpb25hbDsgZXZlcnkga2V5IGdpdmVuIG11c3QgbWF0Y2gpOgog",
        "IC0gbmFtZTogbm8tZHJhZnRzCiAgICBtYXRjaDoKICAgICAgZnJvbTogY2xpZW50ICAgICAgICAgICAgICAgICAjIGNsaWVu",
        "dCB8IHNlcnZlcgogICAgICB0eXBlOiByZXF1ZXN0ICAgICAgICAgICAgICAgICMgcmVxdWVzdCB8IHJlcGx5IHwgZXJyb3Ig",
        "KG9yIGEgbGlzdCkKICAgICAgcHJvZmlsZTogcmV2ICBtICAgICAgICAgICAgICAgIyBhIHByb2ZpbGUgb3IgYSBsaXN0OiBb",
        "cmV2LCBub3Jldl07IGEgcmVwbHkgbWF0Y2hlcyBieSBpdHMgcmVxdWVzdCdzCiAgICAgIGNvbGxlY3Rpb246ICJpbnZlbnRv",
        "cnkuKiIgICAgIyBzY29wZS5jb2xsZWN0aW9uCiAgICAgIGRvYzogImRyYWZ0LSoiICAgICAgICAgICAgICAgIyBkb2N1bWVu",
        "dCBJRCAocmV2L25vcmV2L2dldFJldi9wdXRSZXYgYGlkYCwgYXR0YWNobWVudHMnIGBkb2NJRGApCiAgICAgIHVzZXI6ICJy",
        "ZTpeKGFsaWNlfGJvYikkIiAgICAgIyBCYXMgaWF1LWNodHVzZXIgb3IgY29va2llOjxuYW1lPgogICAgICBjbGllbnRJUDog",
        "WyIxMC4wLjAuMC84IiwgImZkMDA6Oi84Il0KICAgICAgcHJvcGVydGllczogeyBkZWxldGVkOiAiKiIgfSAjIHByb3BlcnR5",
        "IG5hbWUg4oaSIHBhdHRlcm4gKGEgbWlzc2luZyBwcm9wZXJ0eSBkb2VzIG5vdCBtYXRjaCkKICAgIGFjdGlvbjogeyBkZW55",
        "OiB7IGRvbWFpbjogSFRUUCwgY29kZTogNDAzLCBtZXNzYWdlOiAiZHJhZnRzIHN0YXkgb24gdGhlIGRldmljZSIgfSB9Cgog",
        "IC0gbmFtZTogcmVhZC1vbmx5LWd1ZXN0cwogICAgbWF0Y2g6IHsgdXNlcjogImd1ZXN0LSoiIH0KICAgIGFjdGlvbjogcmVh",
        "ZE9ubHkgICAgICAgICAgICAgICAjIGRlbnkgdGhlIGNsaWVudCdzIGNoYW5nZXMvcHJvcG9zZUNoYW5nZXMvcmV2L3B1dFJl",
        "djsgcHVsbHMgd29yawoKICAtIG5hbWU6IGhpZGUtaW50ZXJuYWwtZG9jcwogICAgbWF0Y2g6IHsgdHlwZTogcmVxdWVzdCwg",
        "cHJvZmlsZTogW2NoYW5nZXMsIHByb3Bvc2VDaGFuZ2VzXSB9CiAgICBhY3Rpb246IHsgZmlsdGVyQ2hhbmdlczogeyBkb2M6",
        "ICJfaW50ZXJuYWw6KiIgfSB9ICAgIyByZW1vdmVkIGVudHJpZXMgYXJlIGFuc3dlcmVkICJub3Qgd2FudGVkIgoKICAtIG5h",
        "bWU6IG5vLWJpZy12aWRlb3MgICAgICAgICAgICAjIGJvZHkga2V5czogZGVjeyBmcm9tOiBzZXJ2ZXIsIHR5cGU6IHJlcXVl",
        "c3QsIHByb2ZpbGU6IGNoYW5nZXMgfQogICAgYWN0aW9uOiB7IGRlbGF5OiB7IG1pbjogMjIyMjIyMjIyMjIyMjIyMjIyMjIy",
        "MjIyMjIyMjIyMjIyMjIyMjIyMjIyMjIyMjIyMjIyMjIyMjIyMjIyMjIyMjIyMjIyMjIyMjIyMjIyMjIyMjIyMjIyMjIyMTBt",
        "cywgbWF4OiA1MG1zIH0gfSAgICMgb3IgZGVsYXk6IDL//zBtcwoKICAjIEZhdWx0cyBmb3IgdGVzdGluZyBhcHBzOiBlYWNo",
        "IHRha2VzIGB0b3hpY2l0eWAgKGNoYZRjZSAw4oCmMSkgYW5kIGBsaW1pdGAgKGFjdCBhdCBtb3N0IE4gdGltZTMsIG1lc3Nh",
        "Z2U6ICJ0cnkgYWdhaW4iIH0sIHRveGljaXR5OiAwLjIsIGxpbWl0OiA1IH0KCiAgLSBuYW1lOiBkcm9wLWFmdGVyLTEwMAog",
        "ICAgbWF0Y2g6IHsgZnJvbTogc2VydmVyLCB0eXBlOiByZXF1ZXN0LCBwcm9maWxlOiByZXYgfQogICAgYWN0aW9uOiB7IGNs",
        "b3NlOiB7IGNvZGU6IDEwMDYsIGFmdGVyTWVzc2FnZXM6IDEwMCB9IH0gICAgIyBjb2RlcyAxMDAxLCAxMDA2IChUQ1AgZHJv",
        "cCksIDEwMTEsIDQwMDEsIDQwMDIKICAgIGRyeVJ1bjogdHJ1ZSAgICAgICAgICAgICAgICAgICAjIG9ubHkgbPz8/Pz8/Pz8",
        "/Pz8/Pz8/Pz8/Pz8/Pz8/Pz8/Pz8/Pz8/Pz8/Pz8/Pz8/Pz8/Pz8/Pz8/Pz8/Pz8/Pz8/Pz8/Pz8/Pz8b2cgd2hhdCBpdCB3",
        "b3VsZCBkbwoKICAtIG5hbWU6IHJlc2V0LW9uLWJpZy1wdXNoCiAgICBtYXRjaDogeyBmcm9tOiBjbGllbnQsIHR5cGU6IHJl",
        "cXVlc3QsIHByb2ZpbGU6IHJldiB9CiAgICBhY3Rpb246IHsgY2xvc2U6IHsgY29kZTogMTAxMSwgcmVhc29uOiAiaW5qZWN0",
        "ZWQiLCBhZnRlckJ5dGVzOiA1ME1CIH0sIGxpbWl0OiAxIH0KCiAgLSBuYW1lOiBzdGlja3ktYWNrcwogICAgbWF0Y2g6IHsg",
        "ZnJvbTogc2VydmVyLCB0eXBlOiByZXF1ZXN0LCBwcm9maWxlOiByZXYgfQogICAgYWN0aW9uOiB7IHdpdGhob2xkQWNrczog",
        "eyBkdXJhdGlvbjogMnMgfSwgdG94aWNpdHk6IDEuMSB9CgogIC0gbmFtZTogc2xvdy1nYXRld2F5CiAgICBtYXRjaDogeyBm",
        "cm9tOiBjbGllbnQsIHByb2ZpbGU6IFtnZXRSZXYsIGdldEF0dGFjaG1lbnRdIH0KICAgIGFjdGlvbjogeyByZXBseUxhdGVu",
        "Y3k6IHsgbGF0ZW5jeTogMzAwbXMsIGppdHRlcjogMTAwbXMgfSB9CgogIC0gbmFtZTogdGhpbi1waXBlCiAgICBtYXRjaDog",
        "eyBmcm9tOiBzZXJ2ZXIsIHByb2ZpbGU6IGdldEF0dGFjaG1lbnQgfSAgICMgdGhlIHNlcnZlcidzIHJlcGxpZXM6IHRoZSBh",
        "dHRhY2htZW50IGRhdGEKICAgIGFjdGlvbjogeyBiYW5kd2lkdGg6IHsgYnl0ZXNQZXJTZWNvbmQ6IDY0S0IgfSB9CgojIOKU",
        "gOKUgCBDb25uZWN0aW9uIHJ1bGVzOiBjaGVja2VkIGluIG9yZGVyIGF0IGVhY2ggaGFuZHNoYWtlOyBgYWxsb3dgIGFkbWl0",
        "cyBhdCBvbmNlLCB0aGUgZmlyc3QKIyByZWZ1c2FsIHdpbnMuIExpbWl0cyBhbnN3ZXIgNDI5LzUwMyB3aXRoIFJldHJ5LUFm",
        "dGVyLCB3aGljaChDb3VjaGJhc2UgTGl0ZSByZXRyaWVzIGxhdGVyLgpjb25uZWN0aW9uczoKICBkZWZhdWx0OiBhbGxvdyAg",
        "ICAgICAgICAgICAgICAgICAjIG9yIGRlbnk6IG9ubHkgaGFuZHNoYWtlcyBhbiBgYWxsb3dgIHJ1bGUgbWF0Y2hlZCBnZXQg",
        "aW4KICBydWxlczoKICAgIC0gbmFtZTogYmxvY2tlZC1yYW5nZQogICAgICBtYXRjaDogeyBjbGllbnRJUDogIjIwMy4wLjEx",
        "My4wLzI0IiB9CiAgICAgIGRlbnk6IHsgc3RhdHVzOiA0MDMsIG1lc3NhZ2U6ICJ0aGlzIG5ldHdvcmsgaXMgYmxvY2tlZCIg",
        "fQogICAgLSBuYW1lOiBvcHMtdGVhbQogICAgICBtYXRjaDogeyB1c2VyOiAib3BzLSoiLCB0bHM6IHRydWUgfSAgICMgbWF0",
        "Y2gga2V5czogY2xpZW50SVAsIHVzZXIsIGRhdGFiYXNlLCBzdWJwcm90b2NvbCwgdGxzCiAgICAgIGFsbG93OiB0cnVlCiAg",
        "ICAtIG5hbWU6IG9sZC1jbGllbnRzCiAgICAgIG1hdGNoOiB7IHN1YnByb3RvY29sOiAiQkxJUF8zK0NCTW9iaWxlXzEiIH0K",
        "ICAgICAgZGVueTogeyBzdGF0dXM6IDQwMiwgbWVzc2FnZTogInBsZWFzZSB1cGdyYWRlIHRoZSBhcHAiIH0KICAgIC0gbmFt",
        "ZTogd3NzLW9ubHkKICAgICAgbWF0Y2g6IHsgZGF0YWJhc2U6ICJwcm9kLSoiIH0KICAgICAgcmVxdWlyZVRMUzogdHJ1ZQog",
        "ICAgLSBuYW1lOiBzZXNzaW9uLWNhcHMKICAgICAgbWF4U2Vzc2lvbnM6IHsgdG90YWw6IDEwMDAsIHBlclVzZXI6IDUsIHBl",
        "cklQOiA1MCwgc3RhdHVzOiA1MDMsIHJldHJ5QWZ0ZXI6IDEwcyB9CiAgICAtIG5hbWU6IGhhbmRzaGFrZS1mbG9vZAogICAg",
        "ICBoYW5kc2hha0ZhdWx0OiB7IHBlclNlY29uZDogMiwgYnVyc3Q6IDEwIH0K"
    ].joined())!

    @Test("a duration too long for its nanoseconds is a clean error naming the field")
    func hugeDelayIsRefused() {
        let yaml = String(decoding: Self.hugeDelay, as: UTF8.self)
        #expect(Self.hugeDelay.count == 3_645)
        do {
            _ = try PolicyDocument(yaml: yaml)
            Issue.record("the policy loaded")
        } catch {
            #expect(error.field == "action.delay.min")
            #expect(error.description.hasSuffix("is too long"))
        }
    }

    @Test("durations and sizes past 2^62 are refused in every form; the largest sane ones load")
    func hugeNumbersAreRefused() throws {
        for value in ["2e10", "1e300s", "5000000000000000000ns", "1e17m"] {
            #expect(throws: PolicyError.self) {
                try PolicyDocument(yaml: "rules: [{ name: r, action: { delay: \(value) } }]")
            }
        }
        #expect(throws: PolicyError.self) {
            try PolicyDocument(yaml: "rules: [{ name: r, match: { minBodySize: 1e30GB }, action: { deny: {} } }]")
        }
        let document = try PolicyDocument(yaml: "rules: [{ name: r, match: { minBodySize: 1GB }, action: { delay: 100000000s } }]")
        #expect(document.rules.count == 1)
    }

    /// fuzz-policy crash-601eb7bf: deep `{{{{` nesting after a byte-order mark that the nesting
    /// check's parser, left to detect the encoding, read differently from Yams' (set to UTF-8):
    /// the check saw an early error, Yams recursed on.
    static let deepNestingAfterBOM = Data(base64Encoded: [
        "77u/eHh4eHh4eHh4eHh4Jnh4eHh4ISEhISEhISEhISEgICAgbWF0Y2g6CiAgICAgIGZyb206IGNsaWVudCAgICAgICAgICAg",
        "ICAgICAgIyBjbGllbnQgfCBzZXJ2ZXLvu7+DOgogIS0gbJZlc4ODgzoKICEtIGyWgzoKICEtIGyaZTaDg4M6e3t7e3t7e3t7",
        "e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7QjoK",
        "ICAge3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7",
        "e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7",
        "e3tCOgp7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3tCOgogICB7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7",
        "e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7",
        "e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e0I6CiAgIHt7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7",
        "e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7",
        "e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7QjoKe3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7",
        "e3t7e3t7QjoKICAge3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7",
        "e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7",
        "e3t7e3t7e3t7e3tCOgogICB7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3sgICB7e3t7e3t7",
        "e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7",
        "e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7",
        "e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7",
        "e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7QjoKe3t7e3t7e3t7e3t7e3t7e3t7e3t7",
        "e3t7e3t7e3t7e3t7e3t7QjoKICAge3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7",
        "e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7",
        "e3t7e3t7e3t7e3t7e3t7e3t7e3tCOgogICB7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3sg",
        "ICB7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7",
        "e3t7e3t7e3t7QjoKICAge3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7ICAge3t7e3t7e3t7",
        "e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7",
        "e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7",
        "e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7",
        "e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e0I6Cnt7e3t7e3t7e3t7e3t7e3t7e3t7e3t7",
        "e3t7e3t7e3t7e3t7e0I6CiAgIHt7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7",
        "e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7",
        "e3t7e3t7e3t7e3t7e3t7e3t7QjoKICAge3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7ICAg",
        "e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7",
        "e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7",
        "e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3t7e3tJUF8/TT91cyeK"
    ].joined())!

    @Test("deep nesting after a byte-order mark is refused too: the check reads the text as Yams does")
    func deepNestingAfterBOMIsRefused() {
        let yaml = String(decoding: Self.deepNestingAfterBOM, as: UTF8.self)
        #expect(Self.deepNestingAfterBOM.count == 2_292)
        do {
            _ = try PolicyDocument(yaml: yaml)
            Issue.record("the policy loaded")
        } catch {
            #expect(error.description.contains("nested more than"))
        }
    }

    /// fuzz-policy leak-62c50891 (kept as Fuzz/Corpus/fuzz-policy/regression-long-regex.yaml): a
    /// 403-character `re:` pattern. Foundation keeps a copy of any pattern over 256 UTF-16 units
    /// that it never frees, so each load or reload of such a policy leaked.
    @Test("a regular expression over the length limit is a clean error; one at the limit loads")
    func longRegexIsRefused() throws {
        func policy(_ pattern: String) -> String {
            "rules:\n  - name: r\n    match: { doc: \"re:\(pattern)\" }\n    action: { deny: {} }\n"
        }
        let atLimit = "^" + String(repeating: "é", count: TextPattern.maxRegexLength - 2) + "$"
        #expect(throws: Never.self) { try PolicyDocument(yaml: policy(atLimit)) }
        let tooLong = "^" + String(repeating: "é", count: TextPattern.maxRegexLength - 1) + "$"
        do {
            _ = try PolicyDocument(yaml: policy(tooLong))
            Issue.record("the policy loaded")
        } catch {
            #expect(error.description.contains("regular expression longer than 256 characters (257)"))
            #expect(error.description.contains("match.doc"))
        }
    }
}
