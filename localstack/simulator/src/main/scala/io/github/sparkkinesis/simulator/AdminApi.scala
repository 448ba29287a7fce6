package io.github.sparkkinesis.simulator

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}
import com.fasterxml.jackson.databind.node.ObjectNode

import scala.jdk.CollectionConverters._

/**
 * The test's control panel, JSON over HTTP under `/_sim/`:
 *
 *   GET  /_sim/health                      liveness
 *   GET  /_sim/settings                    quotas, iterator expiry, retention override
 *   PUT  /_sim/settings                    changes the fields given, keeps the others
 *   GET  /_sim/faults                      seed and rules, with how often each fired
 *   PUT  /_sim/faults                      {"seed": 7, "rules": [...]} replaces the rules
 *   DELETE /_sim/faults                    no more faults
 *   GET  /_sim/counters                    per operation, per stream and per shard
 *   DELETE /_sim/counters                  back to zero
 *   POST /_sim/iterators/expire            every iterator issued so far expires
 *   POST /_sim/streams/{name}/delete       the stream is deleted now
 *   POST /_sim/accounts/{id}/streams       {"name": "s", "shards": 2}: a stream of another account, reached only
 *                                          by its ARN (as through its resource policy)
 *   GET  /_sim/auth                        the accepted access key ids (secrets not shown), or auth off
 *   PUT  /_sim/auth                        {"keys": {"AKID": {"secret": "s", "deny": ["PutRecords"]}}} turns auth on
 *   DELETE /_sim/auth                      any credentials are accepted again
 */
final class AdminApi(sim: Simulator) {
  private val mapper = new ObjectMapper()

  def handle(method: String, path: String, body: Array[Byte]): (Int, Array[Byte]) =
    try {
      val result: JsonNode = (method, path.stripPrefix(AdminApi.Prefix).stripSuffix("/")) match {
        case ("GET", "health") => mapper.createObjectNode().put("status", "ok")
        case ("GET", "settings") => AdminJson.settings(mapper, sim.settings)
        case ("PUT" | "POST", "settings") =>
          val patch = parse(body)
          AdminJson.settings(mapper, sim.updateSettings(AdminJson.patchSettings(_, patch)))
        case ("GET", "faults") => AdminJson.faults(mapper, sim.faults)
        case ("PUT" | "POST", "faults") =>
          val spec = parse(body)
          val rules = Option(spec.get("rules")).map(_.elements().asScala.map(AdminJson.rule).toSeq).getOrElse(Nil)
          sim.faults.set(rules, Option(spec.get("seed")).filterNot(_.isNull).map(_.asLong()))
          AdminJson.faults(mapper, sim.faults)
        case ("DELETE", "faults") => sim.faults.clear(); AdminJson.faults(mapper, sim.faults)
        case ("GET", "counters") => sim.lock.synchronized(AdminJson.counters(mapper, sim.counters))
        case ("DELETE", "counters") => sim.lock.synchronized(sim.counters.reset()); mapper.createObjectNode()
        case ("POST", "iterators/expire") => sim.expireAllIterators(); mapper.createObjectNode()
        case ("POST", AdminApi.AccountStreams(account)) =>
          val spec = parse(body)
          val name = Option(spec.get("name")).map(_.asText()).getOrElse(
            throw new IllegalArgumentException("give the stream's \"name\""))
          val shards = Option(spec.get("shards")).map(_.asInt()).getOrElse(1)
          val s = try sim.createStream(name, shards, StreamState.DefaultMaxRecordSizeKiB, account)
          catch { case e: KinesisError => throw new IllegalArgumentException(e.message) }
          mapper.createObjectNode().put("streamARN", s.arn)
        case ("POST", AdminApi.DeleteStream(name)) =>
          try sim.deleteStream(name) catch { case e: KinesisError => throw new NoSuchElementException(e.message) }
          mapper.createObjectNode()
        case ("GET", "auth") => auth()
        case ("PUT" | "POST", "auth") =>
          val keys = Option(parse(body).get("keys")).map(_.properties().asScala.map { e =>
            e.getKey -> AuthKey(Option(e.getValue.get("secret")).map(_.asText()).getOrElse(
              throw new IllegalArgumentException(s"key ${e.getKey} needs a secret")),
              Option(e.getValue.get("deny")).map(_.elements().asScala.map(_.asText()).toSet).getOrElse(Set.empty))
          }.toMap).getOrElse(throw new IllegalArgumentException("auth needs keys"))
          sim.auth = Some(new Auth(keys))
          auth()
        case ("DELETE", "auth") => sim.auth = None; auth()
        case (m, p) => throw new NoSuchElementException(s"no admin endpoint $m ${AdminApi.Prefix}$p")
      }
      (200, mapper.writeValueAsBytes(result))
    } catch {
      case e: NoSuchElementException => (404, error(e.getMessage))
      case e @ (_: IllegalArgumentException | _: java.io.IOException) => (400, error(e.getMessage))
    }

  private def auth(): ObjectNode = {
    val node = mapper.createObjectNode().put("enabled", sim.auth.isDefined)
    val keys = node.putObject("keys")
    sim.auth.foreach(_.keys.toSeq.sortBy(_._1).foreach { case (id, k) =>
      val denied = keys.putObject(id).putArray("deny")
      k.denied.toSeq.sorted.foreach(denied.add)
    })
    node
  }

  private def parse(body: Array[Byte]): ObjectNode = mapper.readTree(body) match {
    case o: ObjectNode => o
    case _ => throw new IllegalArgumentException("the body must be a JSON object")
  }

  private def error(message: String): Array[Byte] =
    mapper.writeValueAsBytes(mapper.createObjectNode().put("error", message))
}

object AdminApi {
  val Prefix = "/_sim/"
  private val DeleteStream = "streams/([^/]+)/delete".r
  private val AccountStreams = """accounts/(\d{12})/streams""".r
}
