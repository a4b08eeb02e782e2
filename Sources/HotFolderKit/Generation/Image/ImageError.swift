import Glibc
import ImageShim

/// An error from the image engine (poppler, libpng, libjpeg, libtiff), with
/// its message and the file it concerns.
public struct ImageError: Error, Sendable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        case passwordNeeded
        case damaged
        case system(errno: Int32)
        case unsupported
        /// Neither JPEG nor PNG nor TIFF.
        case notAnImage
        /// Beyond a size limit the caller set (pixels per page, file size).
        case tooLarge
        case invalidArgument
        case outOfMemory
        case engine
    }

    public let kind: Kind
    public let message: String
    public let file: String

    init(_ error: hi_error, file: String) {
        message = withUnsafeBytes(of: error.message) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        self.file = file
        switch Int(error.status) {
        case Int(HI_E_PASSWORD.rawValue): kind = .passwordNeeded
        case Int(HI_E_DAMAGED.rawValue): kind = .damaged
        case Int(HI_E_SYSTEM.rawValue): kind = .system(errno: error.sys_errno)
        case Int(HI_E_UNSUPPORTED.rawValue): kind = .unsupported
        case Int(HI_E_FORMAT.rawValue): kind = .notAnImage
        case Int(HI_E_TOO_LARGE.rawValue): kind = .tooLarge
        case Int(HI_E_ARGUMENT.rawValue): kind = .invalidArgument
        default: kind = error.sys_errno == ENOMEM ? .outOfMemory : .engine
        }
    }

    init(_ kind: Kind, _ message: String, file: String) {
        self.kind = kind
        self.message = message
        self.file = file
    }

    /// The shim's messages already start with the file's name.
    public var description: String { message.hasPrefix(file) ? message : "\(file): \(message)" }
}

/// The texts of an hi_warnings list (the list stays the caller's to free).
func warningTexts(_ list: OpaquePointer?) -> [String] {
    guard let list else { return [] }
    let count = hi_warnings_count(list)
    return (0..<count).map { String(cString: hi_warnings_at(list, $0)) }
}
