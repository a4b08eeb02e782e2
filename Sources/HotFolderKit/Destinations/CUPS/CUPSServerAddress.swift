import CCUPS

/// Where cupsd listens: a domain socket path (begins with "/") or host[:port].
struct CUPSServerAddress: Sendable, Equatable {
    let host: String
    let port: Int32

    var isDomainSocket: Bool { host.hasPrefix("/") }

    /// Parses the forms libcups accepts for CUPS_SERVER / ServerName:
    /// `/path/to/socket`, `host`, `host:port`, `[v6addr]`, `[v6addr]:port`, each
    /// optionally followed by `/version=...` (ignored).
    init(parsing text: String) {
        let defaultPort = ippPort()
        if text.hasPrefix("/") {
            host = text
            port = defaultPort
            return
        }
        var rest = Substring(text)
        if let slash = rest.firstIndex(of: "/") {
            rest = rest[..<slash]
        }
        if rest.hasPrefix("["), let close = rest.firstIndex(of: "]") {
            host = String(rest[rest.index(after: rest.startIndex)..<close])
            let after = rest[rest.index(after: close)...]
            if after.hasPrefix(":"), let value = Int32(after.dropFirst()) {
                port = value
            } else {
                port = defaultPort
            }
            return
        }
        if let colon = rest.lastIndex(of: ":"), rest.firstIndex(of: ":") == colon,
           let value = Int32(rest[rest.index(after: colon)...]) {
            host = String(rest[..<colon])
            port = value
            return
        }
        host = rest.isEmpty ? "localhost" : String(rest)
        port = defaultPort
    }
}
