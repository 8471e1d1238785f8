//! `ephemeral keys create --org NAME` and `ephemeral orgs set --org NAME …`:
//! act on the server's store directly (as `serve` finds it).

use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, Subcommand};

use super::serve::DataArgs;
use crate::config::Config;
use crate::ids::{key_hash, new_member_key};
use crate::store::{Org, OrgUpdate};

#[derive(Subcommand)]
pub enum KeysCommand {
    /// Create a member key for an organisation (created if needed); the key is printed once.
    Create {
        #[arg(long, value_name = "NAME")]
        org: String,
        #[command(flatten)]
        data: DataArgs,
    },
}

#[derive(Subcommand)]
pub enum OrgsCommand {
    /// Set an organisation's balance and rules (created if needed).
    Set(OrgSetArgs),
}

#[derive(Args)]
pub struct OrgSetArgs {
    #[arg(long, value_name = "NAME")]
    org: String,
    /// The balance, in micro-dollars.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(i64).range(0..))]
    balance_micros: Option<i64>,
    /// The largest `max_cost_micros` one run may ask for.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(i64).range(1..))]
    per_run_cap_micros: Option<i64>,
    /// Force zero data retention on every run of the organisation.
    #[arg(long)]
    zero_data_retention: bool,
    /// Stop forcing zero data retention.
    #[arg(long, conflicts_with = "zero_data_retention")]
    no_zero_data_retention: bool,
    #[command(flatten)]
    data: DataArgs,
}

fn check_name(name: &str) -> anyhow::Result<()> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b));
    anyhow::ensure!(ok, "organisation names are 1 to 64 of A-Z a-z 0-9 - _ .");
    Ok(())
}

pub fn defaults(config: &Config) -> Org {
    Org {
        id: String::new(),
        name: String::new(),
        balance_micros: config.orgs.initial_balance_micros,
        held_micros: 0,
        per_run_cap_micros: config.orgs.per_run_cap_micros,
        zero_data_retention: false,
    }
}

pub fn keys(command: KeysCommand) -> anyhow::Result<ExitCode> {
    let KeysCommand::Create { org, data } = command;
    check_name(&org)?;
    let rt = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
    rt.block_on(async {
        let (config, store) = data.open_store().await?;
        let key = new_member_key();
        let org = store
            .create_key(&org, &key_hash(&key), &defaults(&config))
            .await?;
        println!("{key}");
        eprintln!(
            "ephemeral: member key for organisation {} ({}); it is shown only this once",
            org.name, org.id
        );
        Ok(ExitCode::SUCCESS)
    })
}

pub fn orgs(command: OrgsCommand) -> anyhow::Result<ExitCode> {
    let OrgsCommand::Set(args) = command;
    check_name(&args.org)?;
    let zdr = match (args.zero_data_retention, args.no_zero_data_retention) {
        (true, _) => Some(true),
        (_, true) => Some(false),
        _ => None,
    };
    let update = OrgUpdate {
        balance_micros: args.balance_micros,
        per_run_cap_micros: args.per_run_cap_micros,
        zero_data_retention: zdr,
    };
    let rt = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
    rt.block_on(async {
        let (config, store) = args.data.open_store().await?;
        let org = store
            .set_org(&args.org, &defaults(&config), &update)
            .await?;
        println!(
            "{}\tbalance_micros={}\theld_micros={}\tper_run_cap_micros={}\tzero_data_retention={}",
            org.name,
            org.balance_micros,
            org.held_micros,
            org.per_run_cap_micros,
            org.zero_data_retention
        );
        Ok(ExitCode::SUCCESS)
    })
}
