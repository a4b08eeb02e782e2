import Foundation
import Glibc

/// What `hotfolder status` shows: per folder, what the running service
/// reported (each destination's availability and, when unavailable, which
/// source said no and why; the documents that wait and why), and what lies in
/// the folders themselves.
public enum FolderStatus {
    public static func report(for configuration: ServiceConfiguration, now: Date = Date()) -> String {
        var lines: [String] = []
        let fm = FileManager.default
        for folder in configuration.folders {
            lines.append("[\(folder.name)] \(folder.path)")
            var isDirectory: ObjCBool = false
            guard fm.fileExists(atPath: folder.path, isDirectory: &isDirectory), isDirectory.boolValue else {
                lines.append("  the drop folder does not exist (unmounted share?); documents wait until it is back")
                continue
            }
            let rules = IgnoreRules(ignore: folder.ignore, include: folder.include)
            let unclaimed = ((try? fm.contentsOfDirectory(atPath: folder.path)) ?? []).filter { name in
                rules.reasonToSkip(file: name) == nil && !fm.fileExists(atPath: folder.path + "/" + name + "/.")
            }
            let failed = ((try? fm.contentsOfDirectory(atPath: folder.failedFolder)) ?? []).filter { $0.hasSuffix(".error.txt") }
            let board = StatusBoard.read(serviceArea: folder.serviceArea, instance: configuration.instance)
            if let board, kill(board.pid, 0) == 0 {
                let age = max(0, Int(now.timeIntervalSince1970 - board.updated))
                lines.append("  served by instance \(board.instance) (pid \(board.pid)), reported \(age) s ago")
                for d in board.destinations {
                    if d.available {
                        lines.append("  \(d.destination.rawValue) → \(d.target): available")
                    } else {
                        lines.append("  \(d.destination.rawValue) → \(d.target): UNAVAILABLE (\(d.source ?? "unknown source") says: \(d.reason ?? "no reason given"))")
                    }
                }
                lines.append("  in progress: \(board.inProgress)")
                if !board.waiting.isEmpty {
                    lines.append("  waiting: \(board.waiting.count)")
                    for w in board.waiting.prefix(20) { lines.append("    \(w.document): \(w.reason)") }
                    if board.waiting.count > 20 { lines.append("    … and \(board.waiting.count - 20) more") }
                }
            } else {
                lines.append("  not served right now (no running service for instance \(configuration.instance))")
                lines.append("  claimed, to resume at the next start: \(claimedJobs(in: folder.serviceArea + "/" + configuration.instance + "/jobs"))")
                for d in folder.destinations where d.destination == .export {
                    let writable = fm.isWritableFile(atPath: d.exportFolder)
                    lines.append("  export → \(d.exportFolder): \(writable ? "exists and is writable" : "missing or not writable")")
                }
            }
            lines.append("  not yet taken: \(unclaimed.count)")
            lines.append("  failed (see \(folder.failedFolder)): \(failed.count)")
        }
        return lines.joined(separator: "\n")
    }

    /// The originals in `jobs/`: in its shard folders (`0` … `f`), or one
    /// folder per job as an earlier layout kept them. (The shards themselves
    /// are no jobs.)
    static func claimedJobs(in jobs: String) -> Int {
        let fm = FileManager.default
        var count = 0
        for entry in (try? fm.contentsOfDirectory(atPath: jobs)) ?? [] {
            guard entry.count == 1 else {
                count += 1
                continue
            }
            for name in (try? fm.contentsOfDirectory(atPath: jobs + "/" + entry)) ?? [] {
                if case .original = JobFolder.parse(name) { count += 1 }
            }
        }
        return count
    }
}
