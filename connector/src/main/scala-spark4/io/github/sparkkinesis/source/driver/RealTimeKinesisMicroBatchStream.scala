package io.github.sparkkinesis.source
package driver

import org.apache.spark.sql.connector.read.streaming.SupportsRealTimeMode

/**
 * The stream where Spark has real-time mode (4.1+): [[KinesisMicroBatchStream]] has its methods, this class only
 * tells Spark so. A class of its own because `SupportsRealTimeMode` cannot load on Spark 4.0, and neither can a
 * class implementing it: [[SparkLineSource.microBatchStream]] makes this one only where the interface exists.
 */
final class RealTimeKinesisMicroBatchStream private (config: SourceConfig, checkpointLocation: String)
  extends KinesisMicroBatchStream(config, checkpointLocation) with SupportsRealTimeMode {
  // The interface has a default that does nothing: the stream's own is the one that must run.
  override def prepareForRealTimeMode(): Unit = super[KinesisMicroBatchStream].prepareForRealTimeMode()
}

object RealTimeKinesisMicroBatchStream {
  /**
   * Typed as the base class: a caller that named this class in its code would have Spark 4.0's verifier load it
   * (to check it is a [[KinesisMicroBatchStream]]) when the caller loads, even on a path never taken.
   */
  def apply(config: SourceConfig, checkpointLocation: String): KinesisMicroBatchStream =
    new RealTimeKinesisMicroBatchStream(config, checkpointLocation)
}
