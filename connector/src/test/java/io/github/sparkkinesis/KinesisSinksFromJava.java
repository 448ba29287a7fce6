package io.github.sparkkinesis;

import java.util.Map;

/** Compiles only if the builders are usable from Java as SPEC §1 promises; KinesisSinksSuite runs it. */
public final class KinesisSinksFromJava {
  private KinesisSinksFromJava() {}

  public static Map<String, String> options() {
    return KinesisSinks.kinesis("events")
        .withRegion("eu-west-1")
        .withRetryStrategy(RetryStrategies.indefinitely(250))
        .withMaxInFlightRequests(2)
        .withPreserveKeyOrder(true)
        .withAggregation(65536L, 500, 50)
        .options();
  }

  public static Map<String, String> defaultRetryOptions() {
    return KinesisSinks.kinesis("events").withRetryStrategy(RetryStrategies.defaultStrategy()).options();
  }
}
