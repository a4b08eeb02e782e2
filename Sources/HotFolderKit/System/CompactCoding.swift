/// A small binary encoding for what the service writes per document: journal
/// records and the requests and answers exchanged with worker processes.
/// JSONEncoder/JSONDecoder cost a fifth of the service's CPU per document
/// (measured with perf on a 1-page burst); this writes and reads the same
/// values field by field, in a fixed order, with no keys and no reflection.
///
/// Integers are LEB128 varints (signed ones zigzag-encoded), strings a length
/// then UTF-8, optionals a presence byte. A type's fields are read back in
/// the order it wrote them: a change of a type's layout needs a new journal
/// format version (`Journal.formatVersion`).
struct CompactWriter {
    private(set) var bytes: [UInt8] = []

    init(capacity: Int = 256) { bytes.reserveCapacity(capacity) }

    mutating func byte(_ value: UInt8) { bytes.append(value) }

    mutating func unsigned(_ value: UInt64) {
        var v = value
        while v >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        bytes.append(UInt8(v))
    }

    mutating func int(_ value: Int) {
        let v = Int64(value)
        unsigned(UInt64(bitPattern: (v << 1) ^ (v >> 63)))
    }

    mutating func bool(_ value: Bool) { bytes.append(value ? 1 : 0) }

    mutating func double(_ value: Double) {
        let bits = value.bitPattern
        for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: bits >> UInt64(shift))) }
    }

    mutating func string(_ value: String) {
        var s = value
        s.withUTF8 { utf8 in
            unsigned(UInt64(utf8.count))
            bytes.append(contentsOf: utf8)
        }
    }

    mutating func raw(_ value: [UInt8]) {
        unsigned(UInt64(value.count))
        bytes.append(contentsOf: value)
    }

    mutating func optional<T>(_ value: T?, _ write: (inout CompactWriter, T) -> Void) {
        guard let value else { return bytes.append(0) }
        bytes.append(1)
        write(&self, value)
    }

    mutating func array<T>(_ values: [T], _ write: (inout CompactWriter, T) -> Void) {
        unsigned(UInt64(values.count))
        for v in values { write(&self, v) }
    }

    mutating func value<T: CompactCodable>(_ value: T) { value.encode(to: &self) }

    mutating func enumeration<T: RawRepresentable>(_ value: T) where T.RawValue == String { string(value.rawValue) }
}

struct CompactError: Error, Sendable, CustomStringConvertible {
    let message: String
    init(_ message: String) { self.message = message }
    var description: String { message }
}

struct CompactReader {
    private let bytes: [UInt8]
    private(set) var position: Int
    private let end: Int

    init(_ bytes: [UInt8], from start: Int = 0, to end: Int? = nil) {
        self.bytes = bytes
        self.position = start
        self.end = min(end ?? bytes.count, bytes.count)
    }

    var isAtEnd: Bool { position >= end }

    mutating func byte() throws(CompactError) -> UInt8 {
        guard position < end else { throw CompactError("truncated") }
        defer { position += 1 }
        return bytes[position]
    }

    mutating func unsigned() throws(CompactError) -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let b = try byte()
            guard shift < 64 else { throw CompactError("varint too long") }
            result |= UInt64(b & 0x7F) << shift
            if b < 0x80 { return result }
            shift += 7
        }
    }

    mutating func int() throws(CompactError) -> Int {
        let u = try unsigned()
        let v = Int64(bitPattern: (u >> 1) ^ (0 &- (u & 1)))
        guard let i = Int(exactly: v) else { throw CompactError("integer out of range") }
        return i
    }

    mutating func count() throws(CompactError) -> Int {
        let n = try unsigned()
        // A count can never pass the bytes left (every element takes one at least).
        guard n <= UInt64(end - position) else { throw CompactError("count \(n) past the end") }
        return Int(n)
    }

    mutating func bool() throws(CompactError) -> Bool {
        switch try byte() {
        case 0: false
        case 1: true
        case let b: throw CompactError("bad boolean \(b)")
        }
    }

    mutating func double() throws(CompactError) -> Double {
        guard end - position >= 8 else { throw CompactError("truncated") }
        var bits: UInt64 = 0
        for i in 0..<8 { bits |= UInt64(bytes[position + i]) << UInt64(8 * i) }
        position += 8
        return Double(bitPattern: bits)
    }

    mutating func string() throws(CompactError) -> String {
        let n = try count()
        defer { position += n }
        return String(decoding: bytes[position..<(position + n)], as: UTF8.self)
    }

    mutating func raw() throws(CompactError) -> [UInt8] {
        let n = try count()
        defer { position += n }
        return Array(bytes[position..<(position + n)])
    }

    mutating func optional<T>(_ read: (inout CompactReader) throws(CompactError) -> T) throws(CompactError) -> T? {
        switch try byte() {
        case 0: return nil
        case 1: return try read(&self)
        case let b: throw CompactError("bad optional tag \(b)")
        }
    }

    mutating func array<T>(_ read: (inout CompactReader) throws(CompactError) -> T) throws(CompactError) -> [T] {
        let n = try count()
        var result: [T] = []
        result.reserveCapacity(n)
        for _ in 0..<n { result.append(try read(&self)) }
        return result
    }

    mutating func value<T: CompactCodable>(_ type: T.Type = T.self) throws(CompactError) -> T { try T(from: &self) }

    mutating func enumeration<T: RawRepresentable>(_ type: T.Type = T.self) throws(CompactError) -> T where T.RawValue == String {
        let raw = try string()
        guard let value = T(rawValue: raw) else { throw CompactError("unknown \(T.self) \"\(raw)\"") }
        return value
    }
}

protocol CompactCodable {
    func encode(to writer: inout CompactWriter)
    init(from reader: inout CompactReader) throws(CompactError)
}

extension CompactCodable {
    var compactBytes: [UInt8] {
        var w = CompactWriter()
        encode(to: &w)
        return w.bytes
    }

    init(compactBytes bytes: [UInt8]) throws(CompactError) {
        var r = CompactReader(bytes)
        try self.init(from: &r)
        guard r.isAtEnd else { throw CompactError("\(bytes.count - r.position) bytes left over") }
    }
}

/// CRC-32 (IEEE), to tell a whole journal record from a torn one.
enum CRC32 {
    private static let table: [UInt32] = (0..<256).map { n -> UInt32 in
        var c = UInt32(n)
        for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }

    static func checksum(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        var c: UInt32 = 0xFFFF_FFFF
        table.withUnsafeBufferPointer { t in
            for b in bytes { c = t[Int((c ^ UInt32(b)) & 0xFF)] ^ (c >> 8) }
        }
        return c ^ 0xFFFF_FFFF
    }
}

// MARK: - the types written per document

extension DocumentFacts: CompactCodable {
    func encode(to w: inout CompactWriter) {
        w.enumeration(type)
        w.int(pages)
        w.optional(title) { $0.string($1) }
        w.bool(encrypted)
        w.bool(allowPrint)
        w.bool(allowPrintHighResolution)
        w.int(annotations)
        w.bool(signed)
    }

    init(from r: inout CompactReader) throws(CompactError) {
        self.init(type: try r.enumeration())
        pages = try r.int()
        title = try r.optional { r throws(CompactError) in try r.string() }
        encrypted = try r.bool()
        allowPrint = try r.bool()
        allowPrintHighResolution = try r.bool()
        annotations = try r.int()
        signed = try r.bool()
    }
}

extension StagedFile: CompactCodable {
    func encode(to w: inout CompactWriter) {
        w.string(file)
        w.enumeration(role)
        w.optional(page) { $0.int($1) }
    }

    init(from r: inout CompactReader) throws(CompactError) {
        self.init(file: try r.string(), role: try r.enumeration(), page: try r.optional { r throws(CompactError) in try r.int() })
    }
}

extension StagedOutput: CompactCodable {
    func encode(to w: inout CompactWriter) {
        w.enumeration(destination)
        w.array(files) { $0.value($1) }
        w.enumeration(format)
        w.string(pages)
        w.enumeration(annotations)
        w.string(ext)
        w.int(pageCount)
        w.int(documentPages)
        w.optional(copies) { $0.int($1) }
        w.optional(sides) { $0.string($1) }
        w.optional(name) { $0.string($1) }
    }

    init(from r: inout CompactReader) throws(CompactError) {
        self.init(destination: try r.enumeration(), files: try r.array { r throws(CompactError) in try r.value() },
                  format: try r.enumeration(), pages: try r.string(), annotations: try r.enumeration(),
                  ext: try r.string(), pageCount: try r.int(), documentPages: try r.int())
        copies = try r.optional { r throws(CompactError) in try r.int() }
        sides = try r.optional { r throws(CompactError) in try r.string() }
        name = try r.optional { r throws(CompactError) in try r.string() }
    }
}

extension PipelineResult: CompactCodable {
    func encode(to w: inout CompactWriter) {
        w.value(facts)
        w.array(outputs) { $0.value($1) }
        w.array(warnings) { $0.string($1) }
        w.array(notes) { $0.string($1) }
    }

    init(from r: inout CompactReader) throws(CompactError) {
        self.init(facts: try r.value(), outputs: try r.array { r throws(CompactError) in try r.value() },
                  warnings: try r.array { r throws(CompactError) in try r.string() },
                  notes: try r.array { r throws(CompactError) in try r.string() })
    }
}

extension JobFailure: CompactCodable {
    func encode(to w: inout CompactWriter) {
        w.enumeration(step)
        w.string(reason)
        w.string(remedy)
        w.bool(transient)
    }

    init(from r: inout CompactReader) throws(CompactError) {
        self.init(try r.enumeration(), try r.string(), remedy: try r.string(), transient: try r.bool())
    }
}

extension JournalRecord: CompactCodable {
    // Optional fields are announced by one bit each in a leading mask, so a
    // record costs only the fields it has (most have one or two).
    private enum Field: Int, CaseIterable {
        case name, from, temporary, destination, item, result, failure, printJob, printJobName, number
    }

    func encode(to w: inout CompactWriter) {
        var mask: UInt64 = 0
        func flag(_ f: Field, _ present: Bool) { if present { mask |= 1 << UInt64(f.rawValue) } }
        flag(.name, name != nil)
        flag(.from, from != nil)
        flag(.temporary, temporary != nil)
        flag(.destination, destination != nil)
        flag(.item, item != nil)
        flag(.result, result != nil)
        flag(.failure, failure != nil)
        flag(.printJob, printJob != nil)
        flag(.printJobName, printJobName != nil)
        flag(.number, number != nil)
        w.enumeration(event)
        w.double(time)
        w.unsigned(mask)
        if let name { w.string(name) }
        if let from { w.string(from) }
        if let temporary { w.string(temporary) }
        if let destination { w.enumeration(destination) }
        if let item { w.string(item) }
        if let result { w.value(result) }
        if let failure { w.value(failure) }
        if let printJob { w.int(Int(printJob)) }
        if let printJobName { w.string(printJobName) }
        if let number { w.int(number) }
    }

    init(from r: inout CompactReader) throws(CompactError) {
        self.init(try r.enumeration())
        time = try r.double()
        let mask = try r.unsigned()
        func has(_ f: Field) -> Bool { mask & (1 << UInt64(f.rawValue)) != 0 }
        if has(.name) { name = try r.string() }
        if has(.from) { from = try r.string() }
        if has(.temporary) { temporary = try r.string() }
        if has(.destination) { destination = try r.enumeration() }
        if has(.item) { item = try r.string() }
        if has(.result) { result = try r.value() }
        if has(.failure) { failure = try r.value() }
        if has(.printJob) {
            guard let id = Int32(exactly: try r.int()) else { throw CompactError("print job id out of range") }
            printJob = id
        }
        if has(.printJobName) { printJobName = try r.string() }
        if has(.number) { number = try r.int() }
    }
}
