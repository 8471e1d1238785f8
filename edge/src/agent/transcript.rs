//! A run's conversation, kept structured: what the model said (text and
//! tool calls) and what each tool returned. Providers turn it into their
//! wire format; the scripted model reads it directly.

use serde_json::{Value, json};

/// One tool call the model asked for.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    /// The arguments as the model sent them (JSON text, parsed by the tool).
    pub arguments: String,
}

/// What a tool returned, for the model and for templates.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ToolOutput {
    pub stdout: String,
    pub stderr: String,
    pub exit_code: i64,
    /// The text the model is given (possibly truncated, with a note).
    pub for_model: String,
    /// The tool did not run at all (not allowed, unknown, bad arguments).
    pub refused: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    Assistant {
        content: String,
        tool_calls: Vec<ToolCall>,
    },
    Tool {
        call_id: String,
        output: ToolOutput,
    },
}

#[derive(Debug, Clone, Default)]
pub struct Transcript {
    pub system: String,
    pub user: String,
    pub steps: Vec<Step>,
}

impl Transcript {
    /// OpenAI chat-completions `messages`.
    pub fn messages(&self) -> Vec<Value> {
        let mut messages = vec![
            json!({"role": "system", "content": self.system}),
            json!({"role": "user", "content": self.user}),
        ];
        for step in &self.steps {
            messages.push(match step {
                Step::Assistant {
                    content,
                    tool_calls,
                } if tool_calls.is_empty() => {
                    json!({"role": "assistant", "content": content})
                }
                Step::Assistant {
                    content,
                    tool_calls,
                } => json!({
                    "role": "assistant",
                    "content": if content.is_empty() { Value::Null } else { json!(content) },
                    "tool_calls": tool_calls.iter().map(|c| json!({
                        "id": c.id, "type": "function",
                        "function": {"name": c.name, "arguments": c.arguments},
                    })).collect::<Vec<_>>(),
                }),
                Step::Tool { call_id, output } => {
                    json!({"role": "tool", "tool_call_id": call_id, "content": output.for_model})
                }
            });
        }
        messages
    }

    /// Model turns so far.
    pub fn assistant_turns(&self) -> usize {
        self.steps
            .iter()
            .filter(|s| matches!(s, Step::Assistant { .. }))
            .count()
    }

    /// Every tool output in call order (call 1 first).
    pub fn tool_outputs(&self) -> Vec<&ToolOutput> {
        self.steps
            .iter()
            .filter_map(|s| match s {
                Step::Tool { output, .. } => Some(output),
                _ => None,
            })
            .collect()
    }

    /// Characters the model reads, for estimating prompt tokens.
    pub fn chars(&self) -> usize {
        self.messages().iter().map(|m| m.to_string().len()).sum()
    }
}
