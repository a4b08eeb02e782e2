import Foundation

/// What `hotfolder status` shows, read from the folders themselves.
public enum FolderStatus {
    public static func report(for configuration: ServiceConfiguration) -> String {
        var lines: [String] = []
        let fm = FileManager.default
        for folder in configuration.folders {
            lines.append("[\(folder.name)] \(folder.path)")
            var isDirectory: ObjCBool = false
            guard fm.fileExists(atPath: folder.path, isDirectory: &isDirectory), isDirectory.boolValue else {
                lines.append("  the drop folder does not exist (unmounted share?); documents wait until it is back")
                continue
            }
            let waiting = ((try? fm.contentsOfDirectory(atPath: folder.path)) ?? []).filter { name in
                IgnoreRules(ignore: folder.ignore, include: folder.include).reasonToSkip(file: name) == nil &&
                    !fm.fileExists(atPath: folder.path + "/" + name + "/.")
            }
            let jobs = (try? fm.contentsOfDirectory(atPath: folder.serviceArea + "/" + configuration.instance + "/jobs")) ?? []
            let failed = ((try? fm.contentsOfDirectory(atPath: folder.failedFolder)) ?? []).filter { $0.hasSuffix(".error.txt") }
            lines.append("  waiting to settle or be claimed: \(waiting.count)")
            lines.append("  claimed and in progress: \(jobs.count)")
            lines.append("  failed (see \(folder.failedFolder)): \(failed.count)")
            for d in folder.destinations {
                if d.destination == .export {
                    let writable = fm.isWritableFile(atPath: d.exportFolder)
                    lines.append("  export → \(d.exportFolder): \(writable ? "available" : "unavailable (missing or not writable)")")
                } else {
                    lines.append("  print → \(d.printer ?? "default destination")")
                }
            }
        }
        return lines.joined(separator: "\n")
    }
}
