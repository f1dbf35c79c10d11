#!/usr/bin/env node
// Validates SARIF logs against the official SARIF 2.1.0 JSON schema (draft-04, as shipped by
// @microsoft/jest-sarif) with ajv 6, then checks what GitHub code scanning needs beyond the schema
// (../shared/reference/diagnostic-formats.md §1b). Prints "FILE: ok (N results)" or the problems.
//
// usage: node validate_sarif.js NODE_MODULES_DIR FILE.sarif...     exit 0 all valid, 1 otherwise
"use strict";
const fs = require("fs");
const path = require("path");

const modules = process.argv[2];
const Ajv = require(path.join(modules, "ajv"));
const schema = require(path.join(modules, "@microsoft/jest-sarif/lib/schemas/sarif-2.1.0-rtm.5.json"));
const draft04 = require(path.join(modules, "ajv/lib/refs/json-schema-draft-04.json"));

const ajv = new Ajv({ schemaId: "id", meta: false, allErrors: true, unknownFormats: "ignore" });
ajv.addMetaSchema(draft04);
const validate = ajv.compile(schema);

function githubProblems(log) {
  const p = [];
  const need = (cond, what) => { if (!cond) p.push(what); };
  const text = (o, key, max) => o && typeof o[key] === "string" && o[key].length > 0 && (!max || o[key].length <= max);
  need(log.$schema, "$schema missing");
  need(log.version === "2.1.0", "version is not 2.1.0");
  need(Array.isArray(log.runs) && log.runs.length === 1, "not exactly one run");
  const run = (log.runs || [])[0] || {};
  const driver = (run.tool || {}).driver || {};
  need(text(driver, "name"), "driver.name");
  for (const k of ["version", "semanticVersion", "informationUri"]) need(text(driver, k), `driver.${k}`);
  const rules = driver.rules || [];
  need(rules.length > 0, "driver.rules empty");
  rules.forEach((r, i) => {
    const at = `rules[${i}] (${r.id})`;
    need(text(r, "id"), `${at}.id`);
    need(text(r.shortDescription, "text", 1024), `${at}.shortDescription.text (1..1024)`);
    need(text(r.fullDescription, "text", 1024), `${at}.fullDescription.text (1..1024)`);
    need(text(r.help, "text"), `${at}.help.text (GH2012)`);
    need(text(r.help, "markdown"), `${at}.help.markdown`);
    need(/^https?:\/\//.test(r.helpUri || ""), `${at}.helpUri`);
    need(["note", "warning", "error"].includes((r.defaultConfiguration || {}).level), `${at}.defaultConfiguration.level`);
    need(Array.isArray((r.properties || {}).tags) && r.properties.tags.length > 0, `${at}.properties.tags`);
  });
  need(Array.isArray(run.results), "run.results missing");
  (run.results || []).forEach((res, i) => {
    const at = `results[${i}] (${res.ruleId})`;
    need(text(res, "ruleId"), `${at}.ruleId`);
    need(Number.isInteger(res.ruleIndex) && rules[res.ruleIndex] && rules[res.ruleIndex].id === res.ruleId,
      `${at}.ruleIndex does not name the rule`);
    need(["note", "warning", "error"].includes(res.level), `${at}.level`);
    need(text(res.message, "text"), `${at}.message.text`);
    need(Array.isArray(res.locations) && res.locations.length >= 1 && res.locations.length <= 10, `${at}.locations (1..10)`);
    need(res.partialFingerprints && Object.keys(res.partialFingerprints).length > 0, `${at}.partialFingerprints`);
    const ids = new Set();
    for (const rl of res.relatedLocations || []) {
      need(Number.isInteger(rl.id), `${at}.relatedLocations without id`);
      need(text(rl.message, "text"), `${at}.relatedLocations[${rl.id}].message`);
      ids.add(rl.id);
    }
    for (const m of (res.message.text || "").matchAll(/\]\((\d+)\)/g))
      need(ids.has(Number(m[1])), `${at}: message links (${m[1]}) but no relatedLocation has that id`);
    for (const loc of [...(res.locations || []), ...(res.relatedLocations || [])]) {
      const a = ((loc.physicalLocation || {}).artifactLocation) || {};
      need(text(a, "uri"), `${at}: artifactLocation.uri`);
      need(!/[\s#<>"%]/.test((a.uri || "").replace(/%[0-9A-F]{2}/g, "")), `${at}: uri not percent-encoded: ${a.uri}`);
      need(a.uri.startsWith("file://") || a.uriBaseId === "%SRCROOT%", `${at}: relative uri without uriBaseId: ${a.uri}`);
      const r = (loc.physicalLocation || {}).region;
      if (r) {
        need(r.startLine >= 1, `${at}: region.startLine`);
        if (r.endLine !== undefined) need(r.endLine >= r.startLine, `${at}: region.endLine < startLine`);
        if (r.endLine === r.startLine && r.endColumn !== undefined) need(r.endColumn > r.startColumn, `${at}: empty region`);
      }
    }
  });
  return p;
}

let failed = 0;
for (const file of process.argv.slice(3)) {
  let log;
  try {
    log = JSON.parse(fs.readFileSync(file, "utf8"));
  } catch (e) {
    console.log(`${file}: not one JSON document: ${e.message}`);
    failed++;
    continue;
  }
  const problems = [];
  if (!validate(log)) for (const e of validate.errors.slice(0, 10)) problems.push(`schema: ${e.dataPath} ${e.message}`);
  problems.push(...githubProblems(log).slice(0, 10));
  if (problems.length) {
    failed++;
    console.log(`${file}: INVALID\n  ` + problems.join("\n  "));
  } else {
    console.log(`${file}: ok (${log.runs[0].results.length} results, ${log.runs[0].tool.driver.rules.length} rules)`);
  }
}
process.exit(failed ? 1 : 0);
