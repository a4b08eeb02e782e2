import CCUPS
import Glibc

/// Owns an `ipp_t` (a request being built or a response) and deletes it.
/// Not Sendable: it lives inside one `CUPSClient` call on one thread.
final class IPPMessage {
    private(set) var ipp: OpaquePointer?

    init(ipp: OpaquePointer) {
        self.ipp = ipp
    }

    /// A request with attributes-charset, -natural-language and requesting-user-name set.
    static func request(_ operation: ipp_op_t) -> IPPMessage? {
        guard let ipp = ippNewRequest(operation) else { return nil }
        let message = IPPMessage(ipp: ipp)
        if let user = cupsUser() {
            message.add(name: "requesting-user-name", tag: IPP_TAG_NAME, value: String(cString: user))
        }
        return message
    }

    deinit {
        if let ipp { ippDelete(ipp) }
    }

    /// Hands the `ipp_t` over (cupsDoRequest frees its request).
    func release() -> OpaquePointer? {
        defer { ipp = nil }
        return ipp
    }

    // MARK: Building requests

    func add(name: String, tag: ipp_tag_t, value: String, group: ipp_tag_t = IPP_TAG_OPERATION) {
        guard let ipp else { return }
        ippAddString(ipp, group, tag, name, nil, value)
    }

    func add(name: String, tag: ipp_tag_t, values: [String], group: ipp_tag_t = IPP_TAG_OPERATION) {
        guard let ipp, !values.isEmpty else { return }
        // ippAddStrings copies the strings.
        let copies = values.map { strdup($0) }
        defer { copies.forEach { free($0) } }
        var pointers = copies.map { UnsafePointer<CChar>($0) }
        pointers.withUnsafeMutableBufferPointer { buffer in
            _ = ippAddStrings(ipp, group, tag, name, Int32(buffer.count), nil, buffer.baseAddress)
        }
    }

    func add(name: String, integer: Int32, tag: ipp_tag_t = IPP_TAG_INTEGER, group: ipp_tag_t = IPP_TAG_OPERATION) {
        guard let ipp else { return }
        ippAddInteger(ipp, group, tag, name, integer)
    }

    func add(name: String, boolean: Bool, group: ipp_tag_t = IPP_TAG_OPERATION) {
        guard let ipp else { return }
        ippAddBoolean(ipp, group, name, boolean ? 1 : 0)
    }

    // MARK: Reading responses

    var statusCode: ipp_status_t? {
        guard let ipp else { return nil }
        return ippGetStatusCode(ipp)
    }

    func attribute(_ name: String) -> OpaquePointer? {
        guard let ipp else { return nil }
        return ippFindAttribute(ipp, name, IPP_TAG_ZERO)
    }

    /// The attribute groups of one tag (e.g. every job of a Get-Jobs response),
    /// each as a name → attribute map.
    func groups(_ tag: ipp_tag_t) -> [[String: OpaquePointer]] {
        guard let ipp else { return [] }
        var result: [[String: OpaquePointer]] = []
        var current: [String: OpaquePointer] = [:]
        var attribute = ippFirstAttribute(ipp)
        while let attr = attribute {
            if ippGetGroupTag(attr) == tag, let name = ippGetName(attr) {
                current[String(cString: name)] = attr
            } else if !current.isEmpty {
                result.append(current)
                current = [:]
            }
            attribute = ippNextAttribute(ipp)
        }
        if !current.isEmpty { result.append(current) }
        return result
    }
}

/// Value accessors for an `ipp_attribute_t`.
enum IPPAttribute {
    static func string(_ attr: OpaquePointer?) -> String? {
        guard let attr, ippGetCount(attr) > 0, let value = ippGetString(attr, 0, nil) else { return nil }
        return String(cString: value)
    }

    static func strings(_ attr: OpaquePointer?) -> [String] {
        guard let attr else { return [] }
        return (0..<ippGetCount(attr)).compactMap { index in
            ippGetString(attr, index, nil).map { String(cString: $0) }
        }
    }

    static func integer(_ attr: OpaquePointer?) -> Int32? {
        guard let attr, ippGetCount(attr) > 0 else { return nil }
        return ippGetInteger(attr, 0)
    }

    static func boolean(_ attr: OpaquePointer?) -> Bool? {
        guard let attr, ippGetCount(attr) > 0 else { return nil }
        return ippGetBoolean(attr, 0) != 0
    }
}
