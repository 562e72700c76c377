import Foundation
import Replication

/// Any JSON document decoded into the Replication module's ``JSONValue`` (whose own parser is
/// not public), so the demo can edit a pulled document's body. Booleans stay booleans (the
/// decoder never reads a number as one); integers keep their digits.
struct DecodedJSON: Decodable {
    let value: JSONValue

    init(from decoder: any Decoder) throws {
        if var array = try? decoder.unkeyedContainer() {
            var items: [JSONValue] = []
            while !array.isAtEnd { items.append(try array.decode(DecodedJSON.self).value) }
            value = .array(items)
        } else if let object = try? decoder.container(keyedBy: AnyKey.self) {
            var members: [String: JSONValue] = [:]
            for key in object.allKeys { members[key.stringValue] = try object.decode(DecodedJSON.self, forKey: key).value }
            value = .object(members)
        } else {
            let single = try decoder.singleValueContainer()
            if single.decodeNil() { value = .null }
            else if let flag = try? single.decode(Bool.self) { value = .bool(flag) }
            else if let integer = try? single.decode(Int.self) { value = .number(String(integer)) }
            else if let number = try? single.decode(Double.self) { value = .number(String(number)) }
            else { value = .string(try single.decode(String.self)) }
        }
    }

    /// The members of a JSON object's bytes; nil when they are not an object.
    static func members(of bytes: [UInt8]) -> [String: JSONValue]? {
        (try? JSONDecoder().decode(DecodedJSON.self, from: Data(bytes)))?.value.objectValue
    }

    private struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
}
