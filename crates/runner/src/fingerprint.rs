//! What a resumed run must share with the run that started its results folder besides its flags:
//! the task files, the app packages and the build of phonebench ([`crate::RunConfig`]).
//!
//! Files are hashed with FNV-1a 64 ([`Fnv`], our own code, so a stored hash means the same in
//! every later build): it detects edits, which is all this is for (a results folder is not
//! defended against someone forging a collision into their own task file).

use std::hash::Hasher;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use phonebench_tasks::Fnv;

/// The FNV-1a 64 hash of a file's bytes, as 16 hex digits.
pub fn file_hash(path: &Path) -> std::io::Result<String> {
    let mut h = Fnv::default();
    h.eat(&std::fs::read(path)?);
    Ok(format!("{:016x}", h.0))
}

/// The hash of every file under `dir` (recursively, in path order): each file's path relative
/// to `dir`, its length and its bytes, so a renamed, added, removed or edited file changes it.
/// Symbolic links to folders are not followed (they could loop); their target path is hashed.
pub fn dir_hash(dir: &Path) -> std::io::Result<String> {
    let mut entries = Vec::new();
    collect(dir, dir, &mut entries)?;
    entries.sort();
    let mut h = Fnv::default();
    for (relative, path, is_link_to_dir) in entries {
        h.eat(relative.as_bytes());
        h.eat(&[0]);
        let bytes = if is_link_to_dir {
            std::fs::read_link(&path)?.to_string_lossy().into_owned().into_bytes()
        } else {
            std::fs::read(&path)?
        };
        h.eat(&(bytes.len() as u64).to_le_bytes());
        h.eat(&bytes);
    }
    Ok(format!("{:016x}", h.0))
}

fn collect(root: &Path, dir: &Path, out: &mut Vec<(String, PathBuf, bool)>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let path = entry.path();
        // `file_type` does not follow symbolic links.
        let kind = entry.file_type()?;
        let relative = path.strip_prefix(root).unwrap_or(&path).to_string_lossy().replace('\\', "/");
        if kind.is_dir() {
            collect(root, &path, out)?;
        } else if kind.is_symlink() && path.is_dir() {
            out.push((relative, path, true));
        } else {
            out.push((relative, path, false));
        }
    }
    Ok(())
}

/// Which build of phonebench this is: the crate version and a hash of the running executable's
/// bytes, computed once per process.
///
/// The executable's bytes change whenever any code compiled into it changes (ours, a dependency,
/// the compiler), uncommitted edits included, which a version number or a git commit recorded at
/// build time would miss. Rebuilding identical code gives identical bytes, so it does not refuse
/// a resume for nothing. The executable is hashed with the standard library's SipHash (the fast
/// hasher at hand in debug builds, where the binary is hundreds of MB): its algorithm is part of
/// the executable being hashed, so two runs of one executable always agree and two different
/// executables differ. When the executable cannot be read, the identity is unique to this
/// process, so a resume is refused rather than possibly mixing builds.
pub fn binary_identity() -> String {
    static IDENTITY: OnceLock<String> = OnceLock::new();
    IDENTITY
        .get_or_init(|| {
            let version = env!("CARGO_PKG_VERSION");
            match executable_hash() {
                Ok(hash) => format!("phonebench {version}, executable {hash:016x}"),
                Err(e) => format!(
                    "phonebench {version}, executable unreadable ({e}; process {} at {:?})",
                    std::process::id(),
                    std::time::SystemTime::now()
                ),
            }
        })
        .clone()
}

fn executable_hash() -> std::io::Result<u64> {
    let mut file = std::fs::File::open(std::env::current_exe()?)?;
    // `DefaultHasher::new()` has fixed keys: the same bytes give the same hash in every run.
    let mut h = std::hash::DefaultHasher::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        h.write(&buf[..n]);
    }
    Ok(h.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dir_hash_sees_edits_renames_and_new_files() {
        let dir = std::env::temp_dir().join(format!("phonebench-dirhash-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("screens")).unwrap();
        std::fs::write(dir.join("app.toml"), "id = 'x'").unwrap();
        std::fs::write(dir.join("screens/main.xml"), "<a/>").unwrap();
        let first = dir_hash(&dir).unwrap();
        assert_eq!(first, dir_hash(&dir).unwrap(), "stable");
        std::fs::write(dir.join("screens/main.xml"), "<b/>").unwrap();
        let edited = dir_hash(&dir).unwrap();
        assert_ne!(first, edited);
        std::fs::rename(dir.join("screens/main.xml"), dir.join("screens/other.xml")).unwrap();
        let renamed = dir_hash(&dir).unwrap();
        assert_ne!(edited, renamed);
        std::fs::write(dir.join("extra.sql"), "").unwrap();
        assert_ne!(renamed, dir_hash(&dir).unwrap());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_binary_identity_is_stable_within_a_process() {
        let id = binary_identity();
        assert!(id.starts_with("phonebench "), "{id}");
        assert!(id.contains("executable "), "{id}");
        assert_eq!(id, binary_identity());
    }
}
