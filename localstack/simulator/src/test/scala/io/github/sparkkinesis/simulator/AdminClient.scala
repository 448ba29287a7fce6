package io.github.sparkkinesis.simulator

import java.net.URI
import java.net.http.{HttpClient, HttpRequest, HttpResponse}
import java.nio.charset.StandardCharsets.UTF_8

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}

/** The admin API over HTTP, as a test outside the server's JVM uses it. */
final class AdminClient(endpoint: URI) {
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

  def putSettings(json: String): JsonNode = call("PUT", "settings", json)
  def setFaults(json: String): JsonNode = call("PUT", "faults", json)
  def clearFaults(): JsonNode = call("DELETE", "faults")
  def counters(): JsonNode = call("GET", "counters")
  def resetCounters(): JsonNode = call("DELETE", "counters")
  def expireIterators(): JsonNode = call("POST", "iterators/expire")
  def deleteStream(name: String): JsonNode = call("POST", s"streams/$name/delete")

  def shardCounter(stream: String, shardId: String, name: String): Long =
    counters().path("streams").path(stream).path("shards").path(shardId).path(name).asLong()

  def operationCounter(op: String, name: String): Long = counters().path("operations").path(op).path(name).asLong()
}

/** Settings as the admin API takes them. */
object AdminJsonText {
  def settings(s: Settings): String = AdminJson.settings(new ObjectMapper(), s).toString
}
