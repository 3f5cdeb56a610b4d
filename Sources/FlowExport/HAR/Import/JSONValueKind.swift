import Foundation

/// Names the kind of JSON value at a coding path ("an object", "a string"), so a type error can
/// say what was found as well as what was expected.
///
/// It walks the path with a Decodable probe rather than parsing the file into `Any`: only the
/// containers on the path are opened, and booleans stay distinct from numbers on every platform.
enum JSONValueKind {
    static func describe(at codingPath: [any CodingKey], in data: Data) -> String {
        let decoder = JSONDecoder()
        decoder.userInfo[Probe.pathKey] = codingPath.map { Step(name: $0.stringValue, index: $0.intValue) }
        return (try? decoder.decode(Probe.self, from: data).kind) ?? "something else"
    }

    fileprivate struct Step: Sendable {
        let name: String
        let index: Int?
    }

    private struct Probe: Decodable {
        static let pathKey = CodingUserInfoKey(rawValue: "proxyapp.jsonValueKind.path")!
        let kind: String

        init(from decoder: any Decoder) throws {
            let path = decoder.userInfo[Self.pathKey] as? [Step] ?? []
            let depth = decoder.codingPath.count
            guard depth < path.count else {
                kind = Self.classify(decoder)
                return
            }
            let step = path[depth]
            if let index = step.index {
                var array = try decoder.unkeyedContainer()
                for _ in 0..<index { _ = try array.decode(Skipped.self) }
                kind = try array.decode(Probe.self).kind
            } else {
                let object = try decoder.container(keyedBy: AnyKey.self)
                kind = try object.decode(Probe.self, forKey: AnyKey(stringValue: step.name)).kind
            }
        }

        private static func classify(_ decoder: any Decoder) -> String {
            if let value = try? decoder.singleValueContainer() {
                if value.decodeNil() { return "null" }
                if (try? value.decode(Bool.self)) != nil { return "true or false" }
                if (try? value.decode(Double.self)) != nil { return "a number" }
                if (try? value.decode(String.self)) != nil { return "a string" }
            }
            if (try? decoder.unkeyedContainer()) != nil { return "an array" }
            if (try? decoder.container(keyedBy: AnyKey.self)) != nil { return "an object" }
            return "something else"
        }
    }

    /// Any array element, consumed without being read.
    private struct Skipped: Decodable {
        init(from decoder: any Decoder) throws {}
    }

    private struct AnyKey: CodingKey {
        let stringValue: String
        let intValue: Int? = nil
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
}
