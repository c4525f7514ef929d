//! The prompts, as SPHINX writes them (PKU-ASE-RISE/Sphinx @ 20f8409; no license stated
//! upstream), and ours where SPHINX has none.
//!
//! Every value (a goal, a question, screen text) is put in with `format!`, in one pass: text
//! from data is never read as a template, so a goal containing `{screen}` stays that text.
//!
//! Sources and deviations:
//! - knowledge (`knowledge_probing.py`, `generate_prompt`): byte for byte. A missing category
//!   prints `None`, as Python's f-string prints it.
//! - knowledge repair (`extractor.py` calls `ask_modify_abcd` / `ask_modify_tf` from a module
//!   that is not public): ours, [`mcq_repair`] and [`bq_repair`].
//! - completion (`run_complete.py`): the three system/user pairs byte for byte; the screen is
//!   `str(UIHierarchy)` ([`plain_tree`]).
//! - grounding (`run_lowlevel.py`, `test_lowlevel`): byte for byte in `tree` and
//!   `annotated_image` mode. The coordinate mode is ours: SPHINX's image-mode action lines
//!   (`Agents/prompts/react_prompt_image.py`) and its observation sentence with the screenshot's
//!   real size.
//! - grounding repair (`parsed_lowlevel.py`): byte for byte, 16-space indentation included.
//! - instructions, full context: SPHINX's ReAct prompt (`agents/sphinx-react/prompt.j2`) with the
//!   earlier actions as "PREVIOUS ACTIONS"; focused context: the grounding prompt.

use std::fmt::Write as _;

use phonebench_observe::sphinx::write_sphinx_element;
use phonebench_uitree::UiTree;

use crate::item::Question;

/// `knowledge_probing.py`: the multiple-choice prompt.
pub fn mcq(q: &Question) -> String {
    let mut text = format!(
        "Given the app name {} in the category '{}', answer the following multiple-choice question:\n\n{}\n\nOptions:\n",
        q.app_name,
        category(q),
        q.question
    );
    for (letter, option) in &q.options {
        let _ = writeln!(text, "{letter}. {option}");
    }
    text.push_str("\nPlease answer with only the option character (A, B, C, or D).");
    text
}

/// `knowledge_probing.py`: the binary prompt for one option.
pub fn bq(q: &Question, option: &str) -> String {
    format!(
        "Given the app name {} in the category '{}', is the following statement a correct option for the question: \"{}\"\n\nStatement: {}\nPlease answer with only 'T' for yes or 'F' for no.",
        q.app_name,
        category(q),
        q.question,
        option
    )
}

fn category(q: &Question) -> &str {
    // Python prints a missing (null) category as `None`.
    q.category.as_deref().unwrap_or("None")
}

/// Ours (SPHINX's `ask_modify_abcd` prompt is not public): what option an answer chose.
pub fn mcq_repair(answer: &str) -> String {
    format!(
        "Here is an answer to a multiple-choice question with options A, B, C and D:\n\n{answer}\n\nWhich option does this answer choose? Please answer with only the option character (A, B, C, or D)."
    )
}

/// Ours (SPHINX's `ask_modify_tf` prompt is not public): whether an answer says yes or no.
pub fn bq_repair(answer: &str) -> String {
    format!(
        "Here is an answer to a yes-or-no question:\n\n{answer}\n\nDoes this answer say yes or no? Please answer with only 'T' for yes or 'F' for no."
    )
}

/// `run_complete.py`: `FINISH_SYSTEM_MESSAGE` (tree), `_ACTION`, `_IMAGE`.
pub fn completion_system(with_screen: bool, image: bool) -> &'static str {
    match (with_screen, image) {
        (_, true) => {
            "You are an Android UI testing expert helping me write a UI test case.\nIn our conversation, I will provide you with the last UI screen and the testcase you have generated.\nYour task is to determine whether the test objective has been completed."
        }
        (true, false) => {
            "You are an Android UI testing expert helping me write a UI test case.\nIn our conversation, I will provide you with a list of widgets with texts on the last screen and the testcase you have generated.\nYour task is to determine whether the test objective has been completed."
        }
        (false, false) => {
            "You are an Android UI testing expert helping me write a UI test case.\nIn our conversation, I will provide you with the testcase you have generated.\nYour task is to determine whether the test objective has been completed."
        }
    }
}

/// `run_complete.py`: `history_to_desc` (`- ` + description, one per line).
pub fn history(actions: &[String]) -> String {
    actions.iter().map(|a| format!("- {a}")).collect::<Vec<_>>().join("\n")
}

/// `run_complete.py`: `GOAL_FINISHED_MESSAGE` with the screen text.
pub fn completion_tree(goal: &str, actions: &[String], screen: &str) -> String {
    format!(
        "This is a test case description of a particular APP: {goal}.\nYou are trying to perform the task on an APP.\nThese are the actions we already performed in sequential order: \n{}\nHere is the current screen: \n{screen}\nDo you think that we have finished this particular goal: {goal}?\nThe UI element in current screen maybe not touched. If an necessary element is not touched, the goal is not finished.\nIf we have finished, say YES, else say NO.",
        history(actions)
    )
}

/// `run_complete.py`: `GOAL_FINISHED_MESSAGE_ACTION`.
pub fn completion_action(goal: &str, actions: &[String]) -> String {
    format!(
        "This is a test case description of a particular APP: {goal}.\nYou are trying to perform the task on an APP.\nThese are the actions we already performed in sequential order: \n{}\nDo you think that we have finished this particular goal: {goal}?\nIf we have finished, say YES, else say NO.",
        history(actions)
    )
}

/// `run_complete.py`: `GOAL_FINISHED_MESSAGE_IMAGE` (the screenshot follows it).
pub fn completion_image(goal: &str, actions: &[String]) -> String {
    format!(
        "This is a test case description of a particular APP: {goal}.\nYou are trying to perform the task on an APP.\nThese are the actions we already performed in sequential order: \n{}\nThe observation of the current app screen is the image provided below.\nDo you think that we have finished this particular goal: {goal}?\nThe UI element in current screen maybe not touched. If an necessary element is not touched, the goal is not finished.\nIf we have finished, say YES, else say NO.",
        history(actions)
    )
}

/// SPHINX's `str(UIHierarchy)`: every node of every window but system UI, depth first, one tab
/// per level (the window's root at one), each `a View (content-desc: …, resource-id: …,
/// text: …, class: …)`, one per line. Not indexed: the completion probe's screen.
pub fn plain_tree(tree: &UiTree) -> String {
    let mut text = String::new();
    for window in tree.windows() {
        let root = window.root;
        if tree.node(root).package == phonebench_observe::sphinx::SYSTEM_UI_PACKAGE {
            continue;
        }
        let root_depth = tree.depth(root);
        for id in tree.dfs(root) {
            let depth = tree.depth(id).saturating_sub(root_depth) as usize + 1;
            for _ in 0..depth.min(phonebench_observe::MAX_INDENT_DEPTH) {
                text.push('\t');
            }
            let _ = write_sphinx_element(&mut text, tree.node(id));
            text.push('\n');
            if text.len() > phonebench_observe::MAX_OBSERVATION_BYTES {
                // A hostile dump cannot make the prompt unbounded: whole lines up to the limit.
                let cut = text[..phonebench_observe::MAX_OBSERVATION_BYTES].rfind('\n').map_or(0, |i| i + 1);
                text.truncate(cut);
                return text;
            }
        }
    }
    text
}

/// `run_lowlevel.py`: the system message.
pub const GROUNDING_SYSTEM: &str = "You are an autonomous intelligent agent tasked with navigating a mobile app. You will be given app-based tasks. These tasks will be accomplished through the use of specific actions you can issue.";

const GROUNDING_INFO: &str = "\nHere's the information you'll have:\nThe TASK: This is the task you're trying to complete.\nThe OBSERVATION: This is a simplified representation of the UI screen, providing key information.\nThe PREVIOUS ACTION: This is the action you just performed. It may be helpful to track your progress.\n\nThe actions you can perform fall into several categories:\n\nTouch Screen Actions:\n";

const INDEX_ACTIONS: &str = "`click [index]`: This action clicks on an element with a specific index.\n`longclick [index]`: This action long clicks on an element with a specific index.\n`text [index] [content]`: Use this to type the content into the field with index.\n`swipe [index] [direction=down|up|left|right]`: swipe an element with a specific index in a specific direction.\n";

const COORD_ACTIONS: &str = "`click [x,y]`: This action clicks on a coordination (x,y) on the screen.\n`longclick [x,y]`: This action long clicks on a coordination (x,y) on the screen.\n`text [x,y] [content]`: Use this to type the content into the field with coordination (x,y).\n`swipe [start_x,start_y] [end_x,end_y]`: swipe from coordination (start_x, start_y) to coordination (end_x, end_y).\n";

const GLOBAL_ACTIONS: &str = "\n\nGlobal Navigation Actions:\n`press [back]`: Press back button.\n`press [restart]`: Press to restart the app.\n`press [home]`:  Press to return to the desktop.\n`press [none]`: Do nothing but wait for the UI page completely loaded.\n`press [stop]`: Issue this action when you believe the task is complete.\n`press [enter]`: Press the \"Enter\" key.\n\nTo be successful, it is very important to follow the following rules:\n1. You should only issue an action that is valid given the current observation\n2. You should only issue one action at a time.\n3. You should reason step by step and then issue the next action.\n4. Generate the action in the correct format. After step-by-step reasoning, summary with a \"In summary, the next action I will perform is\" phrase, followed by action inside ``````. For example, \"In summary, the next action I will perform is ```";

const GLOBAL_ACTIONS_END: &str = "```\".\n5. Issue stop action when you think you have achieved the task. Don't generate anything after stop.\n\n";

/// The SoM observation sentence of `run_lowlevel.py`.
const SOM_OBSERVATION: &str = "Observation: The observation of the current app screen is the image provided below, with each actionable element annotated with a bounding box and an index inside the bounding box. The color of the bounding box and the color of the background of the index indicates its action type. red indicates click action, purple indicates longclick action, blue indicates text action, green indicates swipe action.\n";

/// What the grounding prompt shows of the screen.
#[derive(Debug, Clone, Copy)]
pub enum GroundingView<'a> {
    /// SPHINX's indexed tree (`dump_widget_tree`).
    Tree(&'a str),
    /// The set-of-marks screenshot (sent after the text).
    Som,
    /// The plain screenshot of this size (coordinates).
    Coords(u32, u32),
}

/// `run_lowlevel.py`: the user message (the screenshot, if any, is added after it).
pub fn grounding(view: GroundingView<'_>, instruction: &str) -> String {
    let coords = matches!(view, GroundingView::Coords(..));
    let mut text = String::from(GROUNDING_INFO);
    text.push_str(if coords { COORD_ACTIONS } else { INDEX_ACTIONS });
    text.push_str(GLOBAL_ACTIONS);
    text.push_str(if coords { "text [123,456] [some text]" } else { "text [12] [some text]" });
    text.push_str(GLOBAL_ACTIONS_END);
    match view {
        GroundingView::Tree(tree) => {
            let _ = writeln!(text, "Observation: {tree}");
        }
        GroundingView::Som => text.push_str(SOM_OBSERVATION),
        GroundingView::Coords(w, h) => {
            let _ = writeln!(
                text,
                "Observation: The observation of the current app screen is the image provided below. The resolution of the screenshot is {w} * {h}."
            );
        }
    }
    let _ = writeln!(text, "Task: {instruction}");
    text
}

/// The instruction-following probe's full context (ours): SPHINX's ReAct prompt in tree mode
/// (one user message, two blank lines before the observation, as `agents/sphinx-react`
/// renders it) with the goal as the task and, instead of the one previous action, every
/// earlier action of the trajectory, the header saying so.
pub fn full_context(goal: &str, actions: &[String], tree: &str) -> String {
    let previous = if actions.is_empty() { "None".to_string() } else { history(actions) };
    let info = GROUNDING_INFO.trim_start_matches('\n').replace(
        "The PREVIOUS ACTION: This is the action you just performed.",
        "The PREVIOUS ACTIONS: These are the actions you performed so far, in order.",
    );
    let mut text = String::from(GROUNDING_SYSTEM);
    text.push('\n');
    text.push_str(&info);
    text.push_str(INDEX_ACTIONS);
    text.push_str(GLOBAL_ACTIONS);
    text.push_str("text [12] [some text]");
    text.push_str(GLOBAL_ACTIONS_END);
    let _ = write!(text, "\nOBSERVATION:\n{tree}\nTASK: {goal}\nPREVIOUS ACTIONS:\n{previous}");
    text
}

/// `parsed_lowlevel.py`: the fixer's system message.
pub const REPAIR_SYSTEM: &str =
    "You are an autonomous intelligent agent tasked with fixing an output with a required template.";

/// `parsed_lowlevel.py`: the fixer's user message for an unparseable `output` (coordinate
/// actions listed instead of index ones for the coordinate mode: ours, upstream has none).
pub fn grounding_repair(output: &str, coords: bool) -> String {
    let pad = "                ";
    let templates = if coords {
        [
            "```click [x,y]```: This action clicks on a coordination (x,y) on the screen.",
            "```longclick [x,y]```: This action long clicks on a coordination (x,y) on the screen.",
            "```text [x,y] [content]```: Use this to type the content into the field with coordination (x,y).",
            "```swipe [start_x,start_y] [end_x,end_y]```: swipe from coordination (start_x, start_y) to coordination (end_x, end_y).",
        ]
    } else {
        [
            "```click [index]```: This action clicks on an element with a specific index.",
            "```longclick [index]```: This action long clicks on an element with a specific index.",
            "```text [index] [content]```: Use this to type the content into the field with index.",
            "```swipe [index] [direction=down|up|left|right]```: swipe an element with a specific index in a specific direction.",
        ]
    };
    let mut lines = vec![
        String::new(),
        format!("{pad}Here is an output:"),
        format!("{pad}\n{output}\n"),
        pad.to_string(),
    ];
    lines.push(format!(
        "{pad}You must fix the output to match the required template. The template is one of the following:"
    ));
    lines.extend(templates.iter().map(|t| format!("{pad}{t}")));
    for t in [
        "```press [back]```: Press back button.",
        "```press [restart]```: Press to restart the app.",
        "```press [home]```:  Press to return to the desktop.",
        "```press [none]```: Do nothing but wait for the UI page completely loaded.",
        "```press [stop]```: Issue this action when you believe the task is complete.",
        "```press [enter]```: Press the \"Enter\" key.",
    ] {
        lines.push(format!("{pad}{t}"));
    }
    lines.push(pad.to_string());
    lines.push(format!(
        "{pad}You should output with the message \"In summary, the next action I will perform is\" phrase, followed by action inside ``````."
    ));
    let example = if coords { "text [123,456] [some text]" } else { "text [12] [some text]" };
    lines
        .push(format!("{pad}For example, \"In summary, the next action I will perform is ```{example}```\""));
    lines.push(pad.to_string());
    lines.push(format!(
        "{pad}{}",
        if coords { "The coordinates should be numbers." } else { "The index should be a number." }
    ));
    lines.push(format!(
        "{pad}The content should be a string without \" character, the content should be bounded with []."
    ));
    lines.push(format!(
        "{pad}The direction should be one of down, up, left, right, with an [] bounded, without \"direction=\"."
    ));
    lines.push(pad.to_string());
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn question() -> Question {
        Question {
            question_type: "app_level".into(),
            app_name: "Timer".into(),
            category: None,
            question: "Which one?".into(),
            options: vec![("A".into(), "Tool".into()), ("B".into(), "Booking".into())],
            answer: "A".into(),
        }
    }

    #[test]
    fn knowledge_prompts_are_sphinxs_with_python_none() {
        assert_eq!(
            mcq(&question()),
            "Given the app name Timer in the category 'None', answer the following multiple-choice question:\n\nWhich one?\n\nOptions:\nA. Tool\nB. Booking\n\nPlease answer with only the option character (A, B, C, or D)."
        );
        assert_eq!(
            bq(&question(), "Tool"),
            "Given the app name Timer in the category 'None', is the following statement a correct option for the question: \"Which one?\"\n\nStatement: Tool\nPlease answer with only 'T' for yes or 'F' for no."
        );
    }

    #[test]
    fn values_are_never_read_as_templates() {
        let text = completion_action("{history} {goal}", &["Go back.".into()]);
        assert!(text.contains("APP: {history} {goal}.\n"));
        assert!(text.contains("\n- Go back.\n"));
    }

    #[test]
    fn the_grounding_prompt_ends_with_observation_and_task() {
        let text = grounding(GroundingView::Tree("[0] a View to click\n"), "Add a new task.");
        assert!(text.starts_with("\nHere's the information you'll have:\n"));
        assert!(text.ends_with("Observation: [0] a View to click\n\nTask: Add a new task.\n"));
        assert!(text.contains("```text [12] [some text]```\".\n5. Issue stop action"));
    }
}
