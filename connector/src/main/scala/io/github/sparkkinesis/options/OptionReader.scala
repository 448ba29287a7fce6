package io.github.sparkkinesis.options

import java.net.URI
import java.time.Duration
import java.util.Locale

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import io.github.sparkkinesis.client._
import org.apache.spark.network.util.JavaUtils
import org.apache.spark.sql.util.CaseInsensitiveStringMap

/**
 * Typed, validated access to the options a user gave. Every failure is a
 * [[KinesisOptionException]] naming the option, the value (masked when secret) and what is accepted.
 *
 * @param forSink the options are a sink's: the few keys of another connector that meant something else to its sink
 *                than to its source are translated as its sink read them (`ForeignValue.sink`)
 */
final class OptionReader(raw: Map[String, String], forSink: Boolean = false) {
  import KinesisOptions._

  checkKeys()
  // Keys of the AWS Labs and Qubole connectors become ours first; `origin` keeps the key a job wrote, for messages.
  private val translated = ForeignOptions.translate(raw, forSink)
  private val values: Map[String, String] = translated.values
  DatabricksOptions.check(this)

  def get(option: KinesisOption): Option[String] = values.get(option.lowerKey).map(_.trim).filter(_.nonEmpty)

  def required(option: KinesisOption, accepted: String): String =
    get(option).getOrElse(throw new KinesisOptionException(
      s"Option '${option.key}' is required: set it to $accepted."))

  def fail(option: KinesisOption, value: String, accepted: String): Nothing = {
    // A value given through another connector's key is named by that key, as the job wrote it.
    val (key, expected) = translated.origin.get(option.lowerKey)
      .fold((option.key, accepted))(by => (by, s"$accepted (it stands for ${option.key} here)"))
    throw new KinesisOptionException(
      s"Invalid value '${OptionReader.show(option, value)}' for option '$key': expected $expected.")
  }

  def int(option: KinesisOption, min: Int, max: Int): Option[Int] = get(option).map { v =>
    val n =
      try v.toLong
      catch { case _: NumberFormatException => fail(option, v, s"an integer in $min..$max") }
    if (n < min || n > max) fail(option, v, s"an integer in $min..$max")
    n.toInt
  }

  def long(option: KinesisOption, min: Long): Option[Long] = get(option).map { v =>
    val n =
      try v.toLong
      catch { case _: NumberFormatException => fail(option, v, s"an integer >= $min") }
    if (n < min) fail(option, v, s"an integer >= $min")
    n
  }

  /** Spark's duration syntax (`200ms`, `10s`, `1min`); a bare number is milliseconds. */
  def duration(option: KinesisOption, min: Duration = Duration.ZERO): Option[Duration] = get(option).map { v =>
    val accepted = s"a duration such as 200ms, 10s or 1min, at least ${min.toMillis}ms"
    val ms =
      try JavaUtils.timeStringAsMs(v)
      catch { case NonFatal(_) => fail(option, v, accepted) }
    if (ms < min.toMillis) fail(option, v, accepted)
    Duration.ofMillis(ms)
  }

  /** Spark's size syntax (`512k`, `10m`, `1g`, binary units); a bare number is bytes. */
  def bytes(option: KinesisOption, min: Long, max: Long): Option[Long] = get(option).map { v =>
    val accepted = s"a size such as 1048576, 512k or 10m, between $min and $max bytes"
    val n =
      try JavaUtils.byteStringAsBytes(v)
      catch { case NonFatal(_) => fail(option, v, accepted) }
    if (n < min || n > max) fail(option, v, accepted)
    n
  }

  def boolean(option: KinesisOption): Option[Boolean] = get(option).map { v =>
    v.toLowerCase(Locale.ROOT) match {
      case "true" => true
      case "false" => false
      case _ => fail(option, v, "true or false")
    }
  }

  def oneOf(option: KinesisOption, accepted: Seq[String]): Option[String] = get(option).map { v =>
    accepted.find(_.equalsIgnoreCase(v)).getOrElse(fail(option, v, accepted.mkString("one of ", ", ", "")))
  }

  def uri(option: KinesisOption): Option[URI] = get(option).map { v =>
    val accepted = "an absolute URL such as http://127.0.0.1:4566 or https://kinesis.eu-west-1.amazonaws.com"
    val u =
      try new URI(v)
      catch { case NonFatal(_) => fail(option, v, accepted) }
    if (u.getScheme == null || !Set("http", "https").contains(u.getScheme.toLowerCase(Locale.ROOT)) || u.getHost == null) {
      fail(option, v, accepted)
    }
    u
  }

  /** The stream names in `streamName` (or the streams of `streamARN`), in the order given, without duplicates. */
  def streamNames: Seq[String] =
    if (get(StreamName).isEmpty && get(StreamARN).isDefined) streamArns.keys.toSeq.sortBy(streamArnOrder)
    else namesOfStreamName

  /**
   * The ARNs in `streamARN`, by stream name: requests then name those streams by ARN, which reading a stream of
   * another account through its resource policy requires. With `streamName` too, both must name the same streams.
   */
  lazy val streamArns: Map[String, String] = get(StreamARN).map { v =>
    val arns = v.split(',').map(_.trim).toSeq
    val accepted = "stream ARNs (arn:aws:kinesis:<region>:<account>:stream/<name>), comma-separated"
    val byName = arns.map(a => StreamArn.parse(a).map(_.name -> a).getOrElse(fail(StreamARN, v, accepted)))
    if (byName.map(_._1).distinct.size != byName.size) fail(StreamARN, v, "one ARN per stream")
    if (get(StreamName).isDefined && namesOfStreamName.toSet != byName.map(_._1).toSet)
      fail(StreamARN, v, s"the streams of streamName (${namesOfStreamName.mkString(", ")}), or leave streamName out")
    byName.toMap
  }.getOrElse(Map.empty)

  private def streamArnOrder(name: String): Int =
    get(StreamARN).map(_.split(',').map(_.trim).indexWhere(_.endsWith(s"/$name"))).getOrElse(0)

  private def namesOfStreamName: Seq[String] = {
    val v = required(StreamName, "the name of a Kinesis stream (or several, comma-separated), or give streamARN")
    val names = v.split(',').map(_.trim).toSeq
    if (names.exists(_.isEmpty)) fail(StreamName, v, "stream names separated by commas, none empty")
    val bad = names.find(n => n.length > 128 || !n.matches("[a-zA-Z0-9_.-]+"))
    bad.foreach(n => fail(StreamName, v, s"stream names of 1-128 characters from [a-zA-Z0-9_.-] ('$n' is not)"))
    names.distinct
  }

  def connection: ConnectionConfig = {
    get(Region).foreach { r =>
      if (!r.matches("[a-z]{2}(-[a-z]+)+-\\d+")) fail(Region, r, "an AWS region name such as us-east-1")
    }
    // An AWS endpoint names its region; signing for another would fail on every call.
    val region = get(Region).orElse(uri(Endpoint).flatMap(u => OptionReader.regionOfEndpoint(u.getHost)))
    val retry = RetryConfig(
      maxAttempts = get(RetryMaxAttempts) match {
        case Some(v) if v.equalsIgnoreCase("unlimited") => None
        case _ => int(RetryMaxAttempts, 1, Int.MaxValue)
      },
      initialBackoff =
        duration(RetryInitialBackoff, Duration.ofMillis(1)).getOrElse(RetryConfig.default.initialBackoff),
      maxBackoff = duration(RetryMaxBackoff, Duration.ofMillis(1)).getOrElse(RetryConfig.default.maxBackoff)
    )
    if (retry.maxBackoff.compareTo(retry.initialBackoff) < 0) {
      fail(
        RetryMaxBackoff,
        get(RetryMaxBackoff).getOrElse(""),
        s"at least retryInitialBackoff (${retry.initialBackoff.toMillis}ms)")
    }
    val timeouts = TimeoutConfig(
      connect = duration(ConnectTimeout, Duration.ofMillis(1)).getOrElse(TimeoutConfig.default.connect),
      apiCallAttempt =
        duration(ApiCallAttemptTimeout, Duration.ofMillis(1)).getOrElse(TimeoutConfig.default.apiCallAttempt),
      apiCall = duration(ApiCallTimeout, Duration.ofMillis(1))
    )
    ConnectionConfig(region, uri(Endpoint), credentials, retry, timeouts, proxy)
  }

  /** The key that set `option` as the job wrote it: ours, or the other connector's that stands for it. */
  private def named(option: KinesisOption): String = translated.origin.getOrElse(option.lowerKey, option.key)

  private def proxy: ProxyOptions = {
    val server = get(ProxyHost).map { host =>
      if (!OptionReader.ProxyHostForm.pattern.matcher(host).matches()) {
        fail(
          ProxyHost,
          host,
          "a host name or IP address such as proxy.example.com, 10.0.0.5 or [::1], without " +
            "scheme or port (the port goes in proxyPort)")
      }
      val port = int(ProxyPort, 1, 65535).getOrElse(throw new KinesisOptionException(
        s"Option '${named(ProxyHost)}' is set but '${named(ProxyPort)}' is not: set the proxy's port (1..65535)."))
      (get(ProxyUsername), get(ProxyPassword)) match {
        case (Some(_), None) => throw new KinesisOptionException(s"Option '${named(ProxyUsername)}' is set but " +
            s"'${named(ProxyPassword)}' is not: set both, or neither for a proxy without authentication.")
        case (None, Some(_)) => throw new KinesisOptionException(s"Option '${named(ProxyPassword)}' is set but " +
            s"'${named(ProxyUsername)}' is not: set both, or neither for a proxy without authentication.")
        case (user, password) => ProxyServer(host, port, user, password)
      }
    }
    if (server.isEmpty) {
      Seq(ProxyPort, ProxyUsername, ProxyPassword).find(o => get(o).isDefined).foreach { o =>
        throw new KinesisOptionException(s"Option '${named(o)}' only applies with 'proxyHost': set 'proxyHost' or " +
          "remove it (without proxyHost, the JVM's proxy properties apply, with their own credentials).")
      }
    }
    val skip = get(NonProxyHosts).map { v =>
      val hosts = ProxyConfig.parseHosts(v)
      if (hosts.exists(h => !OptionReader.NonProxyHostForm.pattern.matcher(h).matches())) {
        fail(
          NonProxyHosts,
          v,
          "host patterns separated by | or , (each a host name or IP address, * standing for " +
            "any characters), such as localhost|*.internal|10.*"
        )
      }
      hosts
    }
    ProxyOptions(server, skip)
  }

  private def credentials: CredentialsConfig = {
    val static = (get(AwsAccessKey), get(AwsSecretKey)) match {
      case (Some(ak), Some(sk)) => Some(CredentialsConfig.Static(ak, sk, get(AwsSessionToken)))
      case (None, None) =>
        if (get(AwsSessionToken).isDefined) {
          throw new KinesisOptionException("Option 'awsSessionToken' needs 'awsAccessKey' and 'awsSecretKey' too.")
        }
        None
      case (Some(_), None) =>
        throw new KinesisOptionException("Option 'awsAccessKey' is set but 'awsSecretKey' is not: set both.")
      case (None, Some(_)) =>
        throw new KinesisOptionException("Option 'awsSecretKey' is set but 'awsAccessKey' is not: set both.")
    }
    val profile = get(AwsProfile).map(CredentialsConfig.Profile)
    if (static.isDefined && profile.isDefined) {
      throw new KinesisOptionException(
        "Options 'awsAccessKey'/'awsSecretKey' and 'awsProfile' both name credentials: keep one.")
    }
    // The default chain ends with the instance profile: refusing it is only possible when other credentials are given.
    if (boolean(DatabricksOptions.AwsUseInstanceProfile).contains(false) && static.isEmpty && profile.isEmpty) {
      throw new KinesisOptionException("Option 'awsUseInstanceProfile' is false but no credentials are given: set " +
        "'awsAccessKey' and 'awsSecretKey', or 'awsProfile' (with 'roleArn' they are the credentials that assume the " +
        "role), or set awsUseInstanceProfile=true to use the AWS default credential chain.")
    }
    val base = static.orElse(profile).getOrElse(CredentialsConfig.DefaultChain)
    get(RoleArn) match {
      case Some(arn) =>
        if (!arn.startsWith("arn:")) fail(RoleArn, arn, "an IAM role ARN such as arn:aws:iam::123456789012:role/name")
        CredentialsConfig.AssumeRole(
          arn,
          get(RoleExternalId),
          get(RoleSessionName).getOrElse("spark-kinesis"),
          uri(StsEndpoint),
          base)
      case None =>
        Seq(RoleExternalId, RoleSessionName, StsEndpoint).find(o => get(o).isDefined).foreach { o =>
          throw new KinesisOptionException(s"Option '${o.key}' only applies with 'roleArn': set 'roleArn' or remove it.")
        }
        base
    }
  }

  /**
   * A key that is not ours but is a likely typo of one of ours (or of another connector's key we answer) fails, and
   * so does an unknown key prefixed `kinesis.` (the AWS Labs and Qubole connectors' prefix: a key of theirs we do
   * not know would otherwise be silently ignored). Any other key is left alone: Spark passes its own too.
   */
  private def checkKeys(): Unit = {
    val known: Seq[String] = (all ++ DatabricksOptions.foreignKeys).map(_.key) ++ ForeignOptions.all.map(_.key)
    for (key <- raw.keys
      if find(key).isEmpty && DatabricksOptions.findForeign(key).isEmpty && ForeignOptions.find(key).isEmpty) {
      val lower = key.toLowerCase(Locale.ROOT)
      val closest = known.map(k => k -> OptionReader.editDistance(lower, k.toLowerCase(Locale.ROOT))).minBy(_._2)
      val tolerance = if (lower.length <= 6) 1 else 2
      if (closest._2 <= tolerance) {
        throw new KinesisOptionException(
          s"Unknown option '$key': did you mean '${closest._1}'? Options are matched case-insensitively.")
      }
      if (lower.startsWith(ForeignOptions.ForeignPrefix)) {
        throw new KinesisOptionException(s"Unknown option '$key': keys prefixed '${ForeignOptions.ForeignPrefix}' " +
          "are the AWS Labs and Qubole connectors', and this is none of the keys they document. Migrating shows what " +
          "each of their keys becomes here (docs/migrating.md); remove it or write the option of ours it stands for.")
      }
    }
  }

  override def toString: String = OptionReader.redact(raw).toString
}

object OptionReader {
  private val ProxyHostForm = """[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?|\[[0-9A-Fa-f:.]+\]""".r
  private val NonProxyHostForm = """[A-Za-z0-9.*:\[\]_-]+""".r
  private val AwsEndpointHost =
    """(?:^|\.)kinesis(?:-fips)?\.([a-z]{2}(?:-[a-z]+)+-\d+)\.(?:vpce\.)?amazonaws\.com(?:\.cn)?$""".r.unanchored

  /** The region of a Kinesis endpoint such as kinesis.eu-west-1.amazonaws.com (FIPS, VPC endpoint and China too). */
  def regionOfEndpoint(host: String): Option[String] = host.toLowerCase(Locale.ROOT) match {
    case AwsEndpointHost(region) => Some(region)
    case _ => None
  }

  def apply(options: CaseInsensitiveStringMap): OptionReader =
    new OptionReader(options.asCaseSensitiveMap().asScala.toMap)

  def apply(options: Map[String, String]): OptionReader = new OptionReader(options)

  /** A sink's options (see [[OptionReader]]'s `forSink`). */
  def forSink(options: CaseInsensitiveStringMap): OptionReader =
    new OptionReader(options.asCaseSensitiveMap().asScala.toMap, forSink = true)

  def forSink(options: Map[String, String]): OptionReader = new OptionReader(options, forSink = true)

  /** The value as it may appear in a message or log: secrets become `***`. */
  def show(option: KinesisOption, value: String): String = if (option.secret) "***" else value

  /** The option map with every secret value replaced by `***`, for logs and errors. */
  def redact(options: Map[String, String]): Map[String, String] =
    options.map { case (k, v) => k -> (if (KinesisOptions.isSecret(k)) "***" else v) }

  /** Levenshtein distance with adjacent transpositions (optimal string alignment). */
  private[options] def editDistance(a: String, b: String): Int = {
    val d = Array.tabulate(a.length + 1, b.length + 1)((i, j) => if (i == 0) j else if (j == 0) i else 0)
    for (i <- 1 to a.length; j <- 1 to b.length) {
      val cost = if (a(i - 1) == b(j - 1)) 0 else 1
      d(i)(j) = math.min(math.min(d(i - 1)(j) + 1, d(i)(j - 1) + 1), d(i - 1)(j - 1) + cost)
      if (i > 1 && j > 1 && a(i - 1) == b(j - 2) && a(i - 2) == b(j - 1))
        d(i)(j) = math.min(d(i)(j), d(i - 2)(j - 2) + 1)
    }
    d(a.length)(b.length)
  }
}
