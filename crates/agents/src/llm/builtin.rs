//! The built-in agents: the configurations and templates in the repository's `agents/` folder,
//! embedded so the binary runs anywhere. A template path `builtin:DIR/FILE` in any configuration
//! names one of these files.

/// Built-in agent names (each has `NAME/agent.toml`).
pub const AGENTS: [&str; 6] = ["sphinx-react", "t3a", "m3a", "reflexion", "planner-executor", "coords"];

/// Every embedded file: path under `agents/`, contents.
pub const FILES: &[(&str, &str)] = &[
    ("coords/agent.toml", include_str!("../../../../agents/coords/agent.toml")),
    ("coords/qwen2.5-vl/system.j2", include_str!("../../../../agents/coords/qwen2.5-vl/system.j2")),
    ("coords/qwen3-vl/system.j2", include_str!("../../../../agents/coords/qwen3-vl/system.j2")),
    ("coords/qwen3-vl/user.j2", include_str!("../../../../agents/coords/qwen3-vl/user.j2")),
    ("coords/ui-tars/system.j2", include_str!("../../../../agents/coords/ui-tars/system.j2")),
    ("coords/ui-tars/user.j2", include_str!("../../../../agents/coords/ui-tars/user.j2")),
    ("coords/ui-tars/user_doubao.j2", include_str!("../../../../agents/coords/ui-tars/user_doubao.j2")),
    ("judge/judge.j2", include_str!("../../../../agents/judge/judge.j2")),
    ("m3a/action.j2", include_str!("../../../../agents/m3a/action.j2")),
    ("m3a/agent.toml", include_str!("../../../../agents/m3a/agent.toml")),
    ("m3a/summary.j2", include_str!("../../../../agents/m3a/summary.j2")),
    ("planner-executor/agent.toml", include_str!("../../../../agents/planner-executor/agent.toml")),
    (
        "planner-executor/grounding_system.j2",
        include_str!("../../../../agents/planner-executor/grounding_system.j2"),
    ),
    (
        "planner-executor/grounding_user.j2",
        include_str!("../../../../agents/planner-executor/grounding_user.j2"),
    ),
    ("planner-executor/planner.j2", include_str!("../../../../agents/planner-executor/planner.j2")),
    ("reflexion/agent.toml", include_str!("../../../../agents/reflexion/agent.toml")),
    ("reflexion/critic.j2", include_str!("../../../../agents/reflexion/critic.j2")),
    ("sphinx-react/agent.toml", include_str!("../../../../agents/sphinx-react/agent.toml")),
    ("sphinx-react/prompt.j2", include_str!("../../../../agents/sphinx-react/prompt.j2")),
    ("sphinx-react/repair.j2", include_str!("../../../../agents/sphinx-react/repair.j2")),
    ("sphinx-react/repair_system.j2", include_str!("../../../../agents/sphinx-react/repair_system.j2")),
    ("t3a/action.j2", include_str!("../../../../agents/t3a/action.j2")),
    ("t3a/agent.toml", include_str!("../../../../agents/t3a/agent.toml")),
    ("t3a/summary.j2", include_str!("../../../../agents/t3a/summary.j2")),
    ("user/user.j2", include_str!("../../../../agents/user/user.j2")),
];

/// An embedded file by its path under `agents/`.
pub fn file(path: &str) -> Option<&'static str> {
    FILES.iter().find(|(p, _)| *p == path).map(|(_, s)| *s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_agent_has_a_config_and_every_file_in_the_folder_is_embedded() {
        for name in AGENTS {
            assert!(file(&format!("{name}/agent.toml")).is_some(), "{name}");
        }
        // The folder and the table agree: a template added to agents/ must be embedded too.
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../agents");
        let mut on_disk = Vec::new();
        let mut stack = vec![root.clone()];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    stack.push(path);
                } else if path.extension().is_some_and(|e| e == "j2") || path.ends_with("agent.toml") {
                    on_disk.push(path.strip_prefix(&root).unwrap().to_string_lossy().replace('\\', "/"));
                }
            }
        }
        on_disk.sort();
        let embedded: Vec<String> = FILES.iter().map(|(p, _)| p.to_string()).collect();
        assert_eq!(on_disk, embedded);
    }
}
