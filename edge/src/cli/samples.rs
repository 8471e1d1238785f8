//! `ephemeral samples publish RUN_ID [--title T]`, `unpublish ID`, `list`:
//! an operator's read-only samples (`/samples/{id}`), on the server's data
//! (as `serve` finds it).

use std::process::ExitCode;

use anyhow::bail;
use clap::Subcommand;

use super::serve::DataArgs;
use crate::samples;
use crate::timestamp::rfc3339;

#[derive(Subcommand)]
pub enum SamplesCommand {
    /// Publish a finished run as a sample anyone can open; prints its id.
    Publish {
        #[arg(value_name = "RUN_ID")]
        run_id: String,
        /// The sample's title (default: the prompt's first line).
        #[arg(long, value_name = "T")]
        title: Option<String>,
        #[command(flatten)]
        data: DataArgs,
    },
    /// Remove a sample (by its id, or every sample of a run id).
    Unpublish {
        #[arg(value_name = "ID")]
        id: String,
        #[command(flatten)]
        data: DataArgs,
    },
    /// The published samples, newest first.
    List {
        #[command(flatten)]
        data: DataArgs,
    },
}

pub fn run(command: SamplesCommand) -> anyhow::Result<ExitCode> {
    let rt = tokio::runtime::Runtime::new()?;
    rt.block_on(async {
        match command {
            SamplesCommand::Publish {
                run_id,
                title,
                data,
            } => {
                let (_, store) = data.open_store().await?;
                let sample = samples::publish(store.as_ref(), &run_id, title.as_deref()).await?;
                println!("{}", sample.id);
                eprintln!("ephemeral: published at /samples/{}", sample.id);
            }
            SamplesCommand::Unpublish { id, data } => {
                let (_, store) = data.open_store().await?;
                if store.unpublish_sample(&id).await? == 0 {
                    bail!("no sample {id}");
                }
            }
            SamplesCommand::List { data } => {
                let (_, store) = data.open_store().await?;
                for s in store.samples().await? {
                    println!(
                        "{}  {}  {}  {}",
                        s.id,
                        rfc3339(s.published_at),
                        s.run_id,
                        s.title
                    );
                }
            }
        }
        Ok(ExitCode::SUCCESS)
    })
}
