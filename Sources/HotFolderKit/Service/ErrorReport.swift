import Foundation

/// The readable `<name>.error.txt` written next to a failed original.
enum ErrorReport {
    static func text(original: String, folder: FolderConfiguration, job: String, failure: JobFailure, warnings: [String], now: Date = Date()) -> String {
        var lines = [
            "hotfolder could not process \"\(original)\".",
            "",
            "What failed: \(failure.step.rawValue)",
            "Why:         \(failure.reason)",
            "What to do:  \(failure.remedy)",
            "",
            "Folder:      \(folder.name) (\(folder.path))",
            "Job:         \(job)",
            "Time:        \(LogEntry.timestamp(now))",
        ]
        if !warnings.isEmpty {
            lines.append("")
            lines.append("Warnings:")
            lines += warnings.map { "  - \($0)" }
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
