import Foundation
import Glibc

/// `hotfolder journal`: the instance journal of each drop folder, one line per
/// record, for an operator who wants to know what happened to a document (the
/// file itself is binary: length, CRC-32 and a compact encoding per record).
public enum JournalReport {
    public static func report(for configuration: ServiceConfiguration, folder only: String? = nil, job: String? = nil) -> String {
        var lines: [String] = []
        var seen: Set<String> = []
        for folder in configuration.folders where only == nil || folder.name == only {
            let path = "\(folder.serviceArea)/\(configuration.instance)/\(JournalFile.fileName)"
            lines.append("[\(folder.name)] \(path)")
            // Folders below one drop folder share its journal: shown once.
            guard seen.insert(path).inserted else {
                lines.append("  (the same journal as above)")
                continue
            }
            guard let data = FileManager.default.contents(atPath: path) else {
                // Why, from an open of its own (Foundation does not say).
                let fd = open(path, O_RDONLY | O_CLOEXEC)
                let error = fd < 0 ? errno : 0
                if fd >= 0 { close(fd) }
                lines.append(error == ENOENT
                    ? "  no journal: instance \(configuration.instance) has not claimed a document here"
                    : "  cannot read it: \(error == 0 ? "it changed while it was read; try again" : String(cString: strerror(error)) + " (run this as the service's user)")")
                continue
            }
            let records = JournalFile.records(in: Array(data)).filter { job == nil || $0.job == job }
            var open: [String: Bool] = [:]
            for (id, record) in records {
                lines.append("  " + line(id, record))
                open[id] = record.event != .closed
            }
            let unfinished = open.values.filter { $0 }.count
            lines.append("  \(records.count) record\(records.count == 1 ? "" : "s") of \(open.count) job\(open.count == 1 ? "" : "s")"
                         + (unfinished == 0 ? "" : "; \(unfinished) not closed (running, waiting, or resumed at the next start)"))
        }
        if lines.isEmpty, let only { lines.append("no folder named \(only) in \(configuration.file)") }
        return lines.joined(separator: "\n")
    }

    static func line(_ job: String, _ r: JournalRecord) -> String {
        // The second failing record is written once the original is in failed/.
        let step = r.event == .failing && r.name != nil ? "failed" : r.event.rawValue
        var parts = [Clock.timestamp(r.time), job, step]
        if let d = r.destination { parts.append(d.rawValue) }
        if let item = r.item { parts.append("item \(item)") }
        if let name = r.name { parts.append("→ \(name)") }
        if let from = r.from, !from.isEmpty { parts.append("from \(from)/") }
        if let temporary = r.temporary { parts.append("via \(temporary)") }
        if let n = r.number { parts.append("n = \(n)") }
        if let p = r.printJob { parts.append("CUPS job \(p)" + (r.printJobName.map { " (\($0))" } ?? "")) }
        if let result = r.result {
            parts.append("\(result.facts.pages) page\(result.facts.pages == 1 ? "" : "s")")
            for o in result.outputs {
                parts.append("\(o.destination.rawValue): \(o.format.rawValue), pages \(o.pages), annotations \(o.annotations.rawValue), \(o.files.count) file\(o.files.count == 1 ? "" : "s")")
            }
            if !result.warnings.isEmpty { parts.append("\(result.warnings.count) warning\(result.warnings.count == 1 ? "" : "s")") }
        }
        if let f = r.failure { parts.append("failure \(f.description)") }
        return parts.joined(separator: "  ")
    }
}
