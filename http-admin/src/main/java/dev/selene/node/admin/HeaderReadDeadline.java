package dev.selene.node.admin;

import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.stream.Attributes;
import org.apache.pekko.stream.BidiShape;
import org.apache.pekko.stream.Inlet;
import org.apache.pekko.stream.Outlet;
import org.apache.pekko.stream.stage.AbstractInHandler;
import org.apache.pekko.stream.stage.AbstractOutHandler;
import org.apache.pekko.stream.stage.GraphStage;
import org.apache.pekko.stream.stage.GraphStageLogic;
import org.apache.pekko.stream.stage.TimerGraphStageLogic;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;

/**
 * The admin server's header-read deadline: a connection with no request in progress must deliver the headers of
 * its next request within the deadline, or it is closed without an answer. One instance per connection, between
 * Pekko HTTP's server layer and the routes.
 *
 * <p>Pekko HTTP has no such limit: its idle timeout restarts with every byte, so a client that never finishes its
 * headers, or sends them a byte at a time, holds a connection for as long as it likes. Here a request appears only
 * once its headers are parsed, so the clock starts when the connection is accepted and again after each response,
 * and stops when the next request arrives. It therefore also closes a kept-alive connection left idle between
 * requests for longer than the deadline. Closing is completing the response side while no request is open: the
 * server layer then closes the connection.
 */
final class HeaderReadDeadline extends GraphStage<BidiShape<HttpRequest, HttpRequest, HttpResponse, HttpResponse>> {

    private static final Logger LOG = LoggerFactory.getLogger(HeaderReadDeadline.class);
    private static final String TIMER = "header-read-deadline";

    private final Inlet<HttpRequest> requestIn = Inlet.create("HeaderReadDeadline.requestIn");
    private final Outlet<HttpRequest> requestOut = Outlet.create("HeaderReadDeadline.requestOut");
    private final Inlet<HttpResponse> responseIn = Inlet.create("HeaderReadDeadline.responseIn");
    private final Outlet<HttpResponse> responseOut = Outlet.create("HeaderReadDeadline.responseOut");
    private final BidiShape<HttpRequest, HttpRequest, HttpResponse, HttpResponse> shape =
            BidiShape.of(requestIn, requestOut, responseIn, responseOut);
    private final Duration deadline;

    /** A deadline of {@code deadline} for every connection that materializes this stage. */
    HeaderReadDeadline(Duration deadline) {
        if (deadline.isNegative() || deadline.isZero()) {
            throw new IllegalArgumentException("header-read deadline must be positive, was " + deadline);
        }
        this.deadline = deadline;
    }

    @Override
    public BidiShape<HttpRequest, HttpRequest, HttpResponse, HttpResponse> shape() {
        return shape;
    }

    @Override
    public GraphStageLogic createLogic(Attributes inheritedAttributes) {
        return new TimerGraphStageLogic(shape) {
            /** Requests passed to the routes and not yet answered. */
            private int open;

            {
                setHandler(requestIn, new AbstractInHandler() {
                    @Override
                    public void onPush() {
                        open++;
                        cancelTimer(TIMER);
                        push(requestOut, grab(requestIn));
                    }

                    @Override
                    public void onUpstreamFinish() {
                        cancelTimer(TIMER);
                        complete(requestOut);
                    }
                });
                setHandler(requestOut, new AbstractOutHandler() {
                    @Override
                    public void onPull() {
                        pull(requestIn);
                    }

                    @Override
                    public void onDownstreamFinish(Throwable cause) {
                        cancel(requestIn, cause);
                    }
                });
                setHandler(responseIn, new AbstractInHandler() {
                    @Override
                    public void onPush() {
                        open--;
                        push(responseOut, grab(responseIn));
                        if (open == 0 && !isClosed(requestIn)) {
                            scheduleOnce(TIMER, deadline);
                        }
                    }

                    @Override
                    public void onUpstreamFinish() {
                        complete(responseOut);
                    }
                });
                setHandler(responseOut, new AbstractOutHandler() {
                    @Override
                    public void onPull() {
                        pull(responseIn);
                    }

                    @Override
                    public void onDownstreamFinish(Throwable cause) {
                        cancel(responseIn, cause);
                    }
                });
            }

            @Override
            public void preStart() {
                scheduleOnce(TIMER, deadline);
            }

            @Override
            public void onTimer(Object key) {
                LOG.debug("closing an admin connection: no request headers within {}", deadline);
                completeStage();
            }
        };
    }
}
