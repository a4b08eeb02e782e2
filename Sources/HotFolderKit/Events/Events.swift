import Foundation
import Synchronization

public struct LogEntry: Sendable, CustomStringConvertible {
    public let time: Date
    public let level: LogLevel
    public let folder: String?
    public let job: String?
    public let message: String

    public var description: String {
        var parts = [Self.timestamp(time), level.rawValue.uppercased()]
        if let folder { parts.append("[\(folder)]") }
        if let job { parts.append("job \(job):") }
        parts.append(message)
        return parts.joined(separator: " ")
    }

    static func timestamp(_ date: Date) -> String { Clock.timestamp(date.timeIntervalSince1970) }
}

/// How a job ended.
public struct JobOutcome: Sendable {
    public let folder: String
    public let job: String
    public let original: String
    /// Where the original went (done/ or failed/), nil when deleted.
    public let originalNow: String?
    /// The delivered files (exports) and print jobs, as paths or `queue#id`.
    public let delivered: [String]
    public let failure: JobFailure?
    public let warnings: [String]
    public var succeeded: Bool { failure == nil }
}

/// The host's hooks into the engine (seed 000's delegate, seed 004's host).
public protocol HotFolderDelegate: AnyObject, Sendable {
    func hotFolder(log entry: LogEntry)
    func hotFolder(finished outcome: JobOutcome)
}

extension HotFolderDelegate {
    public func hotFolder(log entry: LogEntry) {}
    public func hotFolder(finished outcome: JobOutcome) {}
}

/// Writes log lines to standard error and hands them to the delegate.
public final class Logger: Sendable {
    public let level: LogLevel
    let delegate: (any HotFolderDelegate)?
    let toStandardError: Bool
    private let lock = Mutex(())

    public init(level: LogLevel, delegate: (any HotFolderDelegate)?, toStandardError: Bool = true) {
        self.level = level
        self.delegate = delegate
        self.toStandardError = toStandardError
    }

    /// The message is built only when its level is logged: at `warning`, a
    /// burst's per-document info lines cost nothing.
    public func log(_ level: LogLevel, _ message: @autoclosure () -> String, folder: String? = nil, job: String? = nil) {
        guard level >= self.level else { return }
        let entry = LogEntry(time: Date(), level: level, folder: folder, job: job, message: message())
        if toStandardError {
            let line = entry.description + "\n"
            lock.withLock { _ in FileHandle.standardError.write(Data(line.utf8)) }
        }
        delegate?.hotFolder(log: entry)
    }
}
