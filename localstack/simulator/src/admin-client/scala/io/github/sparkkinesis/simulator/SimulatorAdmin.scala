package io.github.sparkkinesis.simulator

import java.net.URI
import java.net.http.{HttpClient, HttpRequest, HttpResponse}
import java.nio.charset.StandardCharsets.UTF_8

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}

/**
 * The simulator's admin API (`/_sim/...`, JSON) as tests outside its JVM use it: quotas and other settings, fault
 * rules, counters. Shapes are documented in docs/dev/simulator.md ("Admin API"); bodies are passed as JSON
 * text so a test states exactly what it sets. Compiled into the simulator's tests and the integration tests alike
 * (build.sbt adds this folder to both), so there is one client.
 */
final class SimulatorAdmin(endpoint: URI) {
  private val http = HttpClient.newHttpClient()
  private val mapper = new ObjectMapper()

  def call(method: String, path: String, body: String = ""): JsonNode = {
    val request = HttpRequest.newBuilder(endpoint.resolve(s"/_sim/$path"))
      .method(method, if (body.isEmpty) HttpRequest.BodyPublishers.noBody() else HttpRequest.BodyPublishers.ofString(body))
      .header("Content-Type", "application/json").build()
    val response = http.send(request, HttpResponse.BodyHandlers.ofString(UTF_8))
    require(response.statusCode() == 200, s"$method /_sim/$path answered ${response.statusCode()}: ${response.body()}")
    mapper.readTree(response.body())
  }

  /** E.g. settings("""{"quotas": {"factor": 0.1}, "iteratorExpiryMillis": 2000}"""); fields not given are kept. */
  def settings(json: String): JsonNode = call("PUT", "settings", json)

  /** Scales every quota (0.1 throttles ten times sooner), or switches them all off. */
  def quotas(enabled: Boolean = true, factor: Double = 1.0): JsonNode =
    settings(s"""{"quotas": {"enabled": $enabled, "factor": $factor}}""")

  /** Replaces the fault rules, e.g. faults("""[{"kind": "http503", "operations": ["GetRecords"], "probability": 0.2}]""", seed = 7). */
  def faults(rulesJson: String, seed: Long = 0L): JsonNode = call("PUT", "faults", s"""{"seed": $seed, "rules": $rulesJson}""")

  def clearFaults(): JsonNode = call("DELETE", "faults")

  def counters(): JsonNode = call("GET", "counters")

  def resetCounters(): JsonNode = call("DELETE", "counters")

  /** Counter `name` ("calls", "errors", "throttled", "faults") of one operation across all streams. */
  def operationCounter(op: String, name: String): Long = counters().path("operations").path(op).path(name).asLong()

  /** Counter `name` of one shard, e.g. "throttledGetRecordsCalls", "putRecords", "getRecordsBytes". */
  def shardCounter(stream: String, shardId: String, name: String): Long =
    counters().path("streams").path(stream).path("shards").path(shardId).path(name).asLong()

  /** Puts the simulated Kinesis clock `ms` ahead of this machine's (negative: behind); 0 is no skew. */
  def clockOffset(ms: Long): JsonNode = settings(s"""{"clockOffsetMs": $ms}""")

  /** On: a closed shard's last records come in one answer (or event) and its end (ChildShards) in the next. */
  def splitEndAnswer(on: Boolean): JsonNode = settings(s"""{"splitEndAnswer": $on}""")

  def expireIterators(): JsonNode = call("POST", "iterators/expire")

  /** Turns request authentication on, e.g. auth("""{"keys": {"AKID": {"secret": "s", "deny": ["GetRecords"]}}}"""). */
  def auth(json: String): JsonNode = call("PUT", "auth", json)

  /** Any credentials are accepted again. */
  def clearAuth(): JsonNode = call("DELETE", "auth")

  def deleteStream(name: String): JsonNode = call("POST", s"streams/$name/delete")

  /** A stream owned by another account (12 digits), reached only by its ARN, which this returns. */
  def createStreamInAccount(account: String, name: String, shards: Int): String =
    call("POST", s"accounts/$account/streams", s"""{"name": "$name", "shards": $shards}""").get("streamARN").asText()
}
