import Glibc
import PDFShim

/// An error from the PDF engine, with the engine's own message and the file.
public struct PDFError: Error, Sendable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        case passwordNeeded
        case damaged
        case system(errno: Int32)
        case unsupported
        case outOfMemory
        case engine
    }

    public let kind: Kind
    public let message: String
    public let file: String

    init(kind: Kind, message: String, file: String) {
        self.kind = kind
        self.message = message
        self.file = file
    }

    init(_ error: hf_error, file: String) {
        let message = withUnsafeBytes(of: error.message) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        self.message = message
        self.file = file
        switch Int(error.status) {
        case Int(HF_E_PASSWORD.rawValue): kind = .passwordNeeded
        case Int(HF_E_SYSTEM.rawValue): kind = .system(errno: error.sys_errno)
        case Int(HF_E_UNSUPPORTED.rawValue): kind = .unsupported
        case Int(HF_E_DAMAGED.rawValue): kind = .damaged
        default: kind = error.sys_errno == ENOMEM ? .outOfMemory : .engine
        }
    }

    public var description: String { "\(file): \(message)" }
}
