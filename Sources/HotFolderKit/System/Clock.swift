import Glibc

/// Time stamps without Foundation's formatters, which cost far more per call
/// than a document's whole journal entry.
public enum Clock {
    /// `strftime` of the current time (local or UTC).
    public static func format(_ pattern: String, seconds: Int? = nil, utc: Bool = false) -> String {
        var t = time_t(seconds ?? Int(time(nil)))
        var parts = tm()
        if utc { gmtime_r(&t, &parts) } else { localtime_r(&t, &parts) }
        var buffer = [CChar](repeating: 0, count: 64)
        let n = strftime(&buffer, buffer.count, pattern, &parts)
        return String(decoding: buffer.prefix(n).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// ISO 8601 in UTC with milliseconds, for log lines.
    public static func timestamp(_ seconds: Double) -> String {
        let whole = Int(seconds.rounded(.down))
        let millis = min(999, Int((seconds - Double(whole)) * 1000))
        let ms = String(millis)
        return format("%Y-%m-%dT%H:%M:%S", seconds: whole, utc: true) + "." + String(repeating: "0", count: 3 - ms.count) + ms + "Z"
    }
}
