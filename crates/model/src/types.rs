//! The chat-completions data model: what we send ([`ChatRequest`]) and what comes back
//! ([`ChatResponse`]), in the OpenAI wire form every compatible server speaks.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

/// Who speaks a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Instructions.
    System,
    /// The caller (the agent's prompt).
    User,
    /// The model.
    Assistant,
    /// A tool result.
    Tool,
}

impl Role {
    /// The wire name.
    pub fn name(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
        }
    }
}

/// One part of a message's content.
#[derive(Debug, Clone, PartialEq)]
pub enum Part {
    /// Text.
    Text(String),
    /// An image as a URL (we send `data:image/png;base64,...`).
    Image {
        /// The URL sent.
        url: String,
        /// What the image is, for records and reports (never sent): e.g. `screenshot 1080x2400`.
        label: String,
    },
}

/// A tool call the model made (OpenAI `tool_calls`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The call id (echoed in the tool result message).
    #[serde(default)]
    pub id: String,
    /// The function's name.
    pub name: String,
    /// The arguments as the model wrote them (a JSON text, possibly malformed).
    pub arguments: String,
}

/// One message of a conversation.
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    /// The speaker.
    pub role: Role,
    /// Text and images, in order.
    pub content: Vec<Part>,
    /// Calls an assistant message made.
    pub tool_calls: Vec<ToolCall>,
    /// For a tool message: the call it answers.
    pub tool_call_id: Option<String>,
}

impl Message {
    /// A text message.
    pub fn text(role: Role, text: impl Into<String>) -> Message {
        Message { role, content: vec![Part::Text(text.into())], tool_calls: Vec::new(), tool_call_id: None }
    }

    /// A system message.
    pub fn system(text: impl Into<String>) -> Message {
        Message::text(Role::System, text)
    }

    /// A user message.
    pub fn user(text: impl Into<String>) -> Message {
        Message::text(Role::User, text)
    }

    /// An assistant message.
    pub fn assistant(text: impl Into<String>) -> Message {
        Message::text(Role::Assistant, text)
    }

    /// Appends an image part.
    pub fn with_image(mut self, url: String, label: impl Into<String>) -> Message {
        self.content.push(Part::Image { url, label: label.into() });
        self
    }

    /// The text parts joined by newlines.
    pub fn text_content(&self) -> String {
        let texts: Vec<&str> = self
            .content
            .iter()
            .filter_map(|p| match p {
                Part::Text(t) => Some(t.as_str()),
                Part::Image { .. } => None,
            })
            .collect();
        texts.join("\n")
    }

    /// The wire form. Content is a plain string when it is one text part (every server accepts
    /// that, some accept nothing else for system messages), else an array of typed parts.
    pub fn to_wire(&self) -> Value {
        let content = match self.content.as_slice() {
            [Part::Text(t)] => Value::String(t.clone()),
            [] if !self.tool_calls.is_empty() => Value::Null,
            parts => Value::Array(
                parts
                    .iter()
                    .map(|p| match p {
                        Part::Text(t) => json!({"type": "text", "text": t}),
                        Part::Image { url, .. } => json!({"type": "image_url", "image_url": {"url": url}}),
                    })
                    .collect(),
            ),
        };
        let mut m = Map::new();
        m.insert("role".into(), Value::String(self.role.name().into()));
        m.insert("content".into(), content);
        if !self.tool_calls.is_empty() {
            let calls = self
                .tool_calls
                .iter()
                .map(|c| json!({"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}))
                .collect();
            m.insert("tool_calls".into(), Value::Array(calls));
        }
        if let Some(id) = &self.tool_call_id {
            m.insert("tool_call_id".into(), Value::String(id.clone()));
        }
        Value::Object(m)
    }
}

/// Sampling parameters. `None` leaves a parameter to the server's default.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sampling {
    /// Temperature.
    pub temperature: Option<f64>,
    /// Nucleus sampling.
    pub top_p: Option<f64>,
    /// Most tokens to generate.
    pub max_tokens: Option<u32>,
    /// Stop sequences.
    #[serde(default)]
    pub stop: Vec<String>,
    /// Sampling seed (servers that honour it are reproducible at temperature > 0).
    pub seed: Option<u64>,
}

/// A chat-completions request, without the model name (the endpoint adds it).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ChatRequest {
    /// The conversation.
    pub messages: Vec<Message>,
    /// Sampling parameters.
    pub sampling: Sampling,
    /// OpenAI `tools` (function schemas), passed as they are.
    pub tools: Vec<Value>,
    /// Extra body fields passed through unchanged (llama.cpp `grammar`, vLLM `guided_json`,
    /// `response_format`, ...). They are written after the standard fields and may override them.
    pub extra: Map<String, Value>,
    /// Never sent: part of the response-cache key, so that the same request made again within an
    /// episode (a retry, a repeated state at temperature > 0), or in another episode, is a new
    /// sample rather than the first answer replayed. Set by the agent's model handle.
    pub cache_scope: Option<String>,
}

impl ChatRequest {
    /// A request with these messages and sampling parameters.
    pub fn new(messages: Vec<Message>, sampling: Sampling) -> ChatRequest {
        ChatRequest { messages, sampling, tools: Vec::new(), extra: Map::new(), cache_scope: None }
    }

    /// The JSON body sent to `/chat/completions` for `model`.
    pub fn to_body(&self, model: &str) -> Value {
        let mut body = Map::new();
        body.insert("model".into(), Value::String(model.into()));
        body.insert("messages".into(), Value::Array(self.messages.iter().map(Message::to_wire).collect()));
        let s = &self.sampling;
        if let Some(t) = s.temperature {
            body.insert("temperature".into(), json!(t));
        }
        if let Some(p) = s.top_p {
            body.insert("top_p".into(), json!(p));
        }
        if let Some(n) = s.max_tokens {
            body.insert("max_tokens".into(), json!(n));
        }
        if !s.stop.is_empty() {
            body.insert("stop".into(), json!(s.stop));
        }
        if let Some(seed) = s.seed {
            body.insert("seed".into(), json!(seed));
        }
        if !self.tools.is_empty() {
            body.insert("tools".into(), Value::Array(self.tools.clone()));
        }
        for (k, v) in &self.extra {
            body.insert(k.clone(), v.clone());
        }
        Value::Object(body)
    }

    /// Number of images in the request.
    pub fn image_count(&self) -> usize {
        self.messages.iter().flat_map(|m| &m.content).filter(|p| matches!(p, Part::Image { .. })).count()
    }
}

/// Tokens of one call, as the server reported them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct TokenUsage {
    /// Prompt tokens.
    pub prompt_tokens: u64,
    /// Completion tokens.
    pub completion_tokens: u64,
}

impl std::ops::AddAssign for TokenUsage {
    fn add_assign(&mut self, other: TokenUsage) {
        self.prompt_tokens = self.prompt_tokens.saturating_add(other.prompt_tokens);
        self.completion_tokens = self.completion_tokens.saturating_add(other.completion_tokens);
    }
}

/// The most tokens one call can plausibly report; larger counts (a broken or hostile server)
/// are treated as not reported, so sums stay meaningful.
pub const MAX_PLAUSIBLE_TOKENS: u64 = 100_000_000;

/// What the model answered.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ChatResponse {
    /// The message text (empty when the model only called tools).
    pub content: String,
    /// Separate reasoning text, for servers that return it (`reasoning_content`, `reasoning`).
    pub reasoning: Option<String>,
    /// Tool calls.
    pub tool_calls: Vec<ToolCall>,
    /// Why generation stopped (`stop`, `length`, `tool_calls`, ...).
    pub finish_reason: Option<String>,
    /// Tokens.
    pub usage: TokenUsage,
}

impl ChatResponse {
    /// Reads a chat-completions response body. A body that is not one (no `choices`, a
    /// non-object message) is an error: the server answered garbage. Missing optional fields
    /// (usage, content) are tolerated, as servers differ in what they send.
    pub fn from_body(body: &Value) -> Result<ChatResponse, String> {
        if let Some(err) = body.get("error").filter(|e| !e.is_null()) {
            return Err(format!(
                "the server returned an error object: {}",
                crate::truncate(&err.to_string(), 300)
            ));
        }
        let choice = body
            .get("choices")
            .and_then(Value::as_array)
            .and_then(|c| c.first())
            .ok_or("no `choices[0]` in the response")?;
        let message =
            choice.get("message").and_then(Value::as_object).ok_or("no `choices[0].message` object")?;
        let content = match message.get("content") {
            None | Some(Value::Null) => String::new(),
            Some(Value::String(s)) => s.clone(),
            // Some servers answer with typed parts, as requests may be written.
            Some(Value::Array(parts)) => parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join(""),
            Some(other) => return Err(format!("`message.content` is neither text nor parts: {other}")),
        };
        let reasoning = ["reasoning_content", "reasoning"]
            .iter()
            .find_map(|k| message.get(*k).and_then(Value::as_str))
            .filter(|s| !s.is_empty())
            .map(str::to_string);
        let mut tool_calls = Vec::new();
        if let Some(calls) = message.get("tool_calls").and_then(Value::as_array) {
            for call in calls {
                let function = call.get("function").ok_or("a tool call without `function`")?;
                let name =
                    function.get("name").and_then(Value::as_str).ok_or("a tool call without a name")?;
                let arguments = match function.get("arguments") {
                    Some(Value::String(s)) => s.clone(),
                    Some(Value::Null) | None => "{}".to_string(),
                    // Some servers send the arguments as an object instead of a JSON text.
                    Some(other) => other.to_string(),
                };
                let id = call.get("id").and_then(Value::as_str).unwrap_or_default().to_string();
                tool_calls.push(ToolCall { id, name: name.to_string(), arguments });
            }
        }
        let finish_reason = choice.get("finish_reason").and_then(Value::as_str).map(str::to_string);
        let count = |k: &str| {
            body.get("usage")
                .and_then(|u| u.get(k))
                .and_then(Value::as_u64)
                .filter(|n| *n <= MAX_PLAUSIBLE_TOKENS)
                .unwrap_or(0)
        };
        let usage = TokenUsage {
            prompt_tokens: count("prompt_tokens"),
            completion_tokens: count("completion_tokens"),
        };
        Ok(ChatResponse { content, reasoning, tool_calls, finish_reason, usage })
    }

    /// The answer as one text: the content, then each tool call written the way Qwen-style
    /// models write them in text (`<tool_call>\n{"name": ..., "arguments": ...}\n</tool_call>`).
    /// Servers that parse such text into OpenAI `tool_calls` (vLLM's tool parsers, llama.cpp with
    /// `--jinja`) hand the agent the same answer as servers that do not.
    pub fn text(&self) -> String {
        let mut text = self.content.clone();
        for call in &self.tool_calls {
            let arguments = serde_json::from_str::<Value>(&call.arguments)
                .unwrap_or_else(|_| Value::String(call.arguments.clone()));
            if !text.is_empty() && !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str(&format!(
                "<tool_call>\n{}\n</tool_call>",
                json!({"name": call.name, "arguments": arguments})
            ));
        }
        text
    }

    /// The body a server would send for this response (the mock server's output).
    pub fn to_body(&self, model: &str) -> Value {
        let mut message = Map::new();
        message.insert("role".into(), Value::String("assistant".into()));
        message.insert(
            "content".into(),
            if self.content.is_empty() && !self.tool_calls.is_empty() {
                Value::Null
            } else {
                Value::String(self.content.clone())
            },
        );
        if let Some(r) = &self.reasoning {
            message.insert("reasoning_content".into(), Value::String(r.clone()));
        }
        if !self.tool_calls.is_empty() {
            message.insert(
                "tool_calls".into(),
                Value::Array(
                    self.tool_calls
                        .iter()
                        .map(|c| json!({"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}))
                        .collect(),
                ),
            );
        }
        json!({
            "id": "chatcmpl-phonebench",
            "object": "chat.completion",
            "created": 0,
            "model": model,
            "choices": [{"index": 0, "message": Value::Object(message), "finish_reason": self.finish_reason.clone().unwrap_or_else(|| "stop".into())}],
            "usage": {
                "prompt_tokens": self.usage.prompt_tokens,
                "completion_tokens": self.usage.completion_tokens,
                "total_tokens": self.usage.prompt_tokens + self.usage.completion_tokens,
            }
        })
    }
}

/// A completed call: the response and how it was obtained.
#[derive(Debug, Clone, PartialEq)]
pub struct Completion {
    /// The answer.
    pub response: ChatResponse,
    /// Read from the response cache: no server was asked and no new tokens were spent.
    pub cached: bool,
    /// Wall time of the call in ms (0 for a cache hit).
    pub latency_ms: u64,
    /// HTTP attempts made (0 for a cache hit).
    pub attempts: u32,
    /// The price of the call's tokens in USD, when the model has a price.
    pub cost_usd: Option<f64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn body_has_the_standard_fields_and_extra_last() {
        let mut req = ChatRequest::new(
            vec![
                Message::system("sys"),
                Message::user("hi").with_image("data:image/png;base64,AA".into(), "s"),
            ],
            Sampling {
                temperature: Some(0.0),
                max_tokens: Some(64),
                stop: vec!["\n\n".into()],
                seed: Some(7),
                top_p: None,
            },
        );
        req.extra.insert("grammar".into(), json!("root ::= \"x\""));
        req.extra.insert("temperature".into(), json!(0.5));
        let body = req.to_body("m");
        assert_eq!(body["model"], "m");
        assert_eq!(body["messages"][0], json!({"role": "system", "content": "sys"}));
        assert_eq!(
            body["messages"][1]["content"],
            json!([{"type": "text", "text": "hi"}, {"type": "image_url", "image_url": {"url": "data:image/png;base64,AA"}}])
        );
        assert_eq!(body["max_tokens"], 64);
        assert_eq!(body["stop"], json!(["\n\n"]));
        assert_eq!(body["seed"], 7);
        assert_eq!(body["grammar"], "root ::= \"x\"");
        assert_eq!(body["temperature"], 0.5, "extra fields override");
        assert!(body.get("top_p").is_none());
        assert!(body.get("tools").is_none());
    }

    #[test]
    fn responses_parse_content_reasoning_tools_and_usage() {
        let body = json!({
            "choices": [{"message": {"role": "assistant", "content": null, "reasoning_content": "think",
                "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "tap", "arguments": "{\"index\": 0}"}},
                               {"function": {"name": "obj", "arguments": {"a": 1}}}]},
                "finish_reason": "tool_calls"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 3}
        });
        let r = ChatResponse::from_body(&body).unwrap();
        assert_eq!(r.content, "");
        assert_eq!(r.reasoning.as_deref(), Some("think"));
        assert_eq!(
            r.tool_calls[0],
            ToolCall { id: "c1".into(), name: "tap".into(), arguments: "{\"index\": 0}".into() }
        );
        assert_eq!(r.tool_calls[1].arguments, "{\"a\":1}");
        assert_eq!(r.usage, TokenUsage { prompt_tokens: 10, completion_tokens: 3 });
        assert_eq!(r.finish_reason.as_deref(), Some("tool_calls"));
        // Round trip through the mock server's body.
        assert_eq!(ChatResponse::from_body(&r.to_body("m")).unwrap(), r);
    }

    #[test]
    fn tool_calls_become_text_after_the_content() {
        let r = ChatResponse {
            content: "Thought: tap it".into(),
            tool_calls: vec![ToolCall {
                id: "1".into(),
                name: "mobile_use".into(),
                arguments: "{\"action\": \"click\", \"coordinate\": [1, 2]}".into(),
            }],
            ..ChatResponse::default()
        };
        assert_eq!(
            r.text(),
            "Thought: tap it\n<tool_call>\n{\"name\":\"mobile_use\",\"arguments\":{\"action\":\"click\",\"coordinate\":[1,2]}}\n</tool_call>"
        );
        let plain = ChatResponse { content: "hi".into(), ..ChatResponse::default() };
        assert_eq!(plain.text(), "hi");
    }

    #[test]
    fn garbage_is_an_error_naming_what_is_missing() {
        assert!(ChatResponse::from_body(&json!({"hello": 1})).unwrap_err().contains("choices"));
        assert!(ChatResponse::from_body(&json!({"choices": [{}]})).unwrap_err().contains("message"));
        assert!(
            ChatResponse::from_body(&json!({"error": {"message": "overloaded"}}))
                .unwrap_err()
                .contains("overloaded")
        );
        // Content as typed parts and missing usage are fine.
        let r = ChatResponse::from_body(&json!({"choices": [{"message": {"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}}]}))
            .unwrap();
        assert_eq!(r.content, "ab");
        assert_eq!(r.usage, TokenUsage::default());
    }
}
